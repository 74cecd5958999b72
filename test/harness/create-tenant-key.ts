import { readJson } from "./read-json.ts";
import { TEST_ADMIN_TOKEN, type TestMesh } from "./start-test-mesh.ts";

/** A second tenant, made through the admin API of a mesh started with TEST_ADMIN_TOKEN, and a key of it with `scopes`. */
export async function createTenantKey(
  mesh: TestMesh,
  name: string,
  scopes: readonly string[],
): Promise<string> {
  const admin = (path: string, json: unknown) =>
    mesh.api(path, { method: "POST", json, token: TEST_ADMIN_TOKEN });
  const tenant = await readJson<{ id: string }>(await admin("/v1/admin/tenants", { name }));
  const key = await readJson<{ key: string }>(await admin(`/v1/admin/tenants/${tenant.id}/keys`, { scopes }));
  return key.key;
}
