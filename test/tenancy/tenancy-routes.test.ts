import { describe, expect, it } from "vitest";
import { createApp } from "../../workers/src/app/create-app.ts";
import { createMemoryAppDeps } from "./create-memory-app-deps.ts";

const DEV_KEY = "sk-dev";
const ADMIN_TOKEN = "adm-token";
const unused = (): never => {
  throw new Error("not used by these tests");
};

/** The real app over an in-memory tenant store; conversations and limits are out of scope here. */
function createTestApp(adminToken: string | undefined) {
  const { memory, deps } = createMemoryAppDeps(DEV_KEY, {
    conversationIndex: {
      add: unused,
      remove: unused,
      list: () => Promise.resolve({ data: [], hasMore: false }),
    },
    adminToken,
  });
  const app = createApp(() => deps);
  const request = (path: string, init: RequestInit & { token?: string } = {}) => {
    const { token, ...rest } = init;
    return app.request(path, {
      ...rest,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(rest.headers as Record<string, string>),
      },
    });
  };
  return { ...memory, request };
}

describe("the admin API in the app", () => {
  it("is disabled (403) without an admin token, for any bearer", async () => {
    const { request, audit } = createTestApp(undefined);
    for (const token of [undefined, "", ADMIN_TOKEN, DEV_KEY]) {
      const response = await request("/v1/admin/tenants", {
        method: "POST",
        body: JSON.stringify({ name: "x" }),
        headers: { "content-type": "application/json" },
        ...(token === undefined ? {} : { token }),
      });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("admin_api_disabled");
    }
    expect(audit).toEqual([]);
  });

  it("rotates with no body at all, and refuses a body that is not JSON", async () => {
    const { request } = createTestApp(ADMIN_TOKEN);
    const json = { "content-type": "application/json" };
    const tenant = (await (
      await request("/v1/admin/tenants", {
        method: "POST",
        token: ADMIN_TOKEN,
        headers: json,
        body: '{"name":"a"}',
      })
    ).json()) as { id: string };
    const key = (await (
      await request(`/v1/admin/tenants/${tenant.id}/keys`, {
        method: "POST",
        token: ADMIN_TOKEN,
        headers: json,
        body: "{}",
      })
    ).json()) as { id: string };
    const path = `/v1/admin/tenants/${tenant.id}/keys/${key.id}/rotate`;
    const plain = await request(path, { method: "POST", token: ADMIN_TOKEN, body: "grace_seconds=5" });
    expect(plain.status).toBe(415);
    const bare = await request(path, { method: "POST", token: ADMIN_TOKEN });
    expect(bare.status).toBe(200);
    expect(((await bare.json()) as { rotated_from: string }).rotated_from).toBe(key.id);
  });

  it("documents the admin routes and the audit log in the OpenAPI document", async () => {
    const { request } = createTestApp(ADMIN_TOKEN);
    const doc = (await (await request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/admin/tenants",
        "/v1/admin/tenants/{id}/keys",
        "/v1/admin/tenants/{id}/keys/{key_id}/rotate",
        "/v1/admin/tenants/{id}/keys/{key_id}",
        "/v1/audit_log",
      ]),
    );
    expect(doc.paths["/v1/admin/tenants"]?.post?.security).toEqual([{ adminToken: [] }]);
  });

  it("does not let a tenant key past the admin guard through path variants", async () => {
    const { request } = createTestApp(ADMIN_TOKEN);
    for (const path of [
      "/v1/admin/tenants",
      "/v1/%61dmin/tenants",
      "/v1/admin//tenants",
      "/v1//admin/tenants",
    ]) {
      const response = await request(path, { token: DEV_KEY });
      expect([403, 404], path).toContain(response.status);
    }
  });
});
