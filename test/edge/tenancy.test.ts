import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN, TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;

type Envelope = { error: { message: string; type: string; code: string; param: string | null } };
type Tenant = { id: string; object: "tenant"; name: string; status: string; created_at: number };
type ApiKey = {
  id: string;
  object: "api_key";
  tenant_id: string;
  key?: string;
  prefix: string | null;
  last4: string;
  scopes: string[];
  created_at: number;
  revoked_at: number | null;
  rotated_from: string | null;
};
type List<T> = {
  object: "list";
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
};
type AuditEntry = { id: string; tenant_id: string; actor: string; action: string; target: string };

/** One request with an explicit bearer (or none): the mesh's own `api` always sends the dev key. */
async function call(
  path: string,
  options: { token?: string; method?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers["content-type"] = "application/json";
  return fetch(`${mesh.edge.url}${path}`, {
    method: options.method ?? "GET",
    headers,
    ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
  });
}

async function read<T>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const admin = (path: string, options: { method?: string; json?: unknown } = {}) =>
  call(path, { ...options, token: TEST_ADMIN_TOKEN });

async function createTenant(name: string): Promise<Tenant> {
  return read<Tenant>(await admin("/v1/admin/tenants", { method: "POST", json: { name } }));
}

async function createKey(
  tenantId: string,
  body: { scopes?: string[]; name?: string } = {},
): Promise<ApiKey & { key: string }> {
  const key = await read<ApiKey>(
    await admin(`/v1/admin/tenants/${tenantId}/keys`, { method: "POST", json: body }),
  );
  if (key.key === undefined) throw new Error("no key in the creation answer");
  return { ...key, key: key.key };
}

async function listKeys(tenantId: string): Promise<{ body: string; keys: ApiKey[] }> {
  const response = await admin(`/v1/admin/tenants/${tenantId}/keys`);
  const body = await response.text();
  expect(response.status, body).toBe(200);
  return { body, keys: (JSON.parse(body) as List<ApiKey>).data };
}

async function auditLog(token: string, query = ""): Promise<List<AuditEntry>> {
  return read<List<AuditEntry>>(await call(`/v1/audit_log${query}`, { token }));
}

let tenantA: Tenant;
let tenantB: Tenant;
let keyA: ApiKey & { key: string };
let adminKeyA: ApiKey & { key: string };
let keyB: ApiKey & { key: string };
let adminKeyB: ApiKey & { key: string };
let conversationA: string;

beforeAll(async () => {
  mesh = await startTestMesh({ adminToken: TEST_ADMIN_TOKEN });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("the dev key (MOL_DEV_API_KEY)", () => {
  it("works unchanged: its first uses, all at once, store the dev tenant and key once", async () => {
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => call("/v1/conversations", { token: TEST_API_KEY })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 8 }, () => 200));
    const log = await auditLog(TEST_API_KEY);
    expect(log.data.map((e) => e.action)).toEqual(["api_key.created", "tenant.created"]);
  });
});

describe("the admin API", () => {
  it("creates and lists tenants", async () => {
    tenantA = await createTenant("Acme");
    tenantB = await createTenant("Globex");
    expect(tenantA).toMatchObject({ object: "tenant", name: "Acme", status: "active" });
    expect(tenantA.id).toMatch(/^ten_[0-9a-f]{32}$/);
    expect(tenantA.created_at).toBeGreaterThan(1_700_000_000);
    const listed = await read<List<Tenant>>(await admin("/v1/admin/tenants?order=asc"));
    expect(listed.data.map((t) => t.id)).toEqual(expect.arrayContaining([tenantA.id, tenantB.id]));
    const page = await read<List<Tenant>>(await admin("/v1/admin/tenants?limit=1"));
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    expect(await read<Tenant>(await admin(`/v1/admin/tenants/${tenantB.id}`))).toEqual(tenantB);
    const missing = await read<Envelope>(await admin("/v1/admin/tenants/ten_missing"), 404);
    expect(missing.error.code).toBe("tenant_not_found");
    const invalid = await read<Envelope>(
      await admin("/v1/admin/tenants", { method: "POST", json: { name: "" } }),
      400,
    );
    expect(invalid.error.param).toBe("name");
  });

  it("issues keys whose secret is shown once; listings carry only the prefix and last four", async () => {
    keyA = await createKey(tenantA.id, { name: "backend" });
    adminKeyA = await createKey(tenantA.id, { scopes: ["admin"] });
    keyB = await createKey(tenantB.id);
    adminKeyB = await createKey(tenantB.id, { scopes: ["admin"] });
    expect(keyA.key).toMatch(/^sk-mol-[0-9A-Za-z]{12}_[0-9A-Za-z]{32}$/);
    expect(keyA).toMatchObject({
      object: "api_key",
      tenant_id: tenantA.id,
      scopes: ["conversations", "responses", "chat"],
      revoked_at: null,
      rotated_from: null,
      last4: keyA.key.slice(-4),
    });
    expect(keyA.id).toMatch(/^key_/);
    expect(keyA.prefix).toBe(keyA.key.slice(0, "sk-mol-".length + 12));
    expect(adminKeyA.scopes).toEqual(["admin"]);

    const { body, keys } = await listKeys(tenantA.id);
    expect(keys.map((k) => k.id)).toEqual([keyA.id, adminKeyA.id]);
    for (const listed of keys) expect(listed).not.toHaveProperty("key");
    expect(body).not.toContain(keyA.key.slice(-32));
    expect(body).not.toContain(adminKeyA.key.slice(-32));
    expect(keys[0]).toMatchObject({ prefix: keyA.prefix, last4: keyA.last4, scopes: keyA.scopes });

    const badScope = await read<Envelope>(
      await admin(`/v1/admin/tenants/${tenantA.id}/keys`, { method: "POST", json: { scopes: ["root"] } }),
      400,
    );
    expect(badScope.error.param).toBe("scopes[0]");
    const unknownTenant = await admin("/v1/admin/tenants/ten_missing/keys", { method: "POST", json: {} });
    expect(unknownTenant.status).toBe(404);
  });

  it("refuses a missing or wrong admin token (401) and a tenant key (403) on every admin route", async () => {
    const routes: Array<[string, string, unknown?]> = [
      ["POST", "/v1/admin/tenants", { name: "intruder" }],
      ["GET", "/v1/admin/tenants"],
      ["GET", `/v1/admin/tenants/${tenantA.id}`],
      ["POST", `/v1/admin/tenants/${tenantA.id}/keys`, {}],
      ["GET", `/v1/admin/tenants/${tenantA.id}/keys`],
      ["POST", `/v1/admin/tenants/${tenantA.id}/keys/${keyA.id}/rotate`, {}],
      ["DELETE", `/v1/admin/tenants/${tenantA.id}/keys/${keyA.id}`],
    ];
    const attempts: Array<[string | undefined, number, string]> = [
      [undefined, 401, "invalid_admin_token"],
      ["mol-admin-wrong", 401, "invalid_admin_token"],
      [`${TEST_ADMIN_TOKEN}x`, 401, "invalid_admin_token"],
      [adminKeyA.key, 403, "admin_token_required"],
      [TEST_API_KEY, 403, "admin_token_required"],
    ];
    for (const [method, path, json] of routes) {
      for (const [token, status, code] of attempts) {
        const response = await call(path, { method, json, ...(token === undefined ? {} : { token }) });
        const body = await read<Envelope>(response, status);
        expect(body.error.code, `${method} ${path} with ${token ?? "no token"}`).toBe(code);
        expect(response.headers.get("x-request-id")).toMatch(/^req_/);
      }
    }
    // Nothing above changed anything.
    const tenants = await read<List<Tenant>>(await admin("/v1/admin/tenants?limit=100"));
    expect(tenants.data.map((t) => t.name)).not.toContain("intruder");
    expect((await listKeys(tenantA.id)).keys.map((k) => [k.id, k.revoked_at])).toEqual([
      [keyA.id, null],
      [adminKeyA.id, null],
    ]);
  });
});

describe("tenant keys", () => {
  it("a new key works: the official client creates a conversation and runs a turn", async () => {
    const client = new OpenAI({ apiKey: keyA.key, baseURL: `${mesh.edge.url}/v1`, maxRetries: 0 });
    const conversation = await client.conversations.create({ metadata: { owner: "acme" } });
    conversationA = conversation.id;
    const response = await client.responses.create({
      conversation: conversationA,
      input: "hello from acme",
      max_output_tokens: 8,
    });
    expect(response.status).toMatch(/completed|incomplete/);
    const listed = await read<List<{ id: string }>>(await call("/v1/conversations", { token: keyA.key }));
    expect(listed.data.map((c) => c.id)).toEqual([conversationA]);
  });

  it("isolates tenants: B's key gets 404 for A's conversation everywhere and never lists it", async () => {
    for (const [method, path, json] of [
      ["GET", `/v1/conversations/${conversationA}`],
      ["GET", `/v1/conversations/${conversationA}/items`],
      ["DELETE", `/v1/conversations/${conversationA}`],
      ["POST", "/v1/responses", { conversation: conversationA, input: "steal", max_output_tokens: 4 }],
      ["POST", "/v1/responses", { conversation: conversationA, input: "steal", stream: true }],
    ] as const) {
      for (const token of [keyB.key, TEST_API_KEY]) {
        const body = await read<Envelope>(await call(path, { method, json, token }), 404);
        expect(body.error.code, `${method} ${path}`).toBe("conversation_not_found");
      }
    }
    for (const token of [keyB.key, TEST_API_KEY]) {
      const listed = await read<List<{ id: string }>>(await call("/v1/conversations?limit=100", { token }));
      expect(listed.data.map((c) => c.id)).not.toContain(conversationA);
    }
    // A's conversation is untouched: the DELETE and the turns above did not reach it.
    const items = await read<List<{ id: string }>>(
      await call(`/v1/conversations/${conversationA}/items`, { token: keyA.key }),
    );
    expect(items.data).toHaveLength(2);
  });

  it("enforces scopes per route (403) and lets any valid key list models", async () => {
    const responsesOnly = await createKey(tenantA.id, { scopes: ["responses"] });
    const denied: Array<[string, string, string, unknown?]> = [
      [adminKeyA.key, "GET", "/v1/conversations"],
      [adminKeyA.key, "POST", "/v1/conversations", {}],
      [adminKeyA.key, "GET", `/v1/conversations/${conversationA}`],
      [adminKeyA.key, "POST", "/v1/responses", { conversation: conversationA, input: "hi" }],
      [
        adminKeyA.key,
        "POST",
        "/v1/chat/completions",
        { model: "mol", messages: [{ role: "user", content: "hi" }] },
      ],
      [responsesOnly.key, "GET", `/v1/conversations/${conversationA}/items`],
      [
        responsesOnly.key,
        "POST",
        "/v1/chat/completions",
        { model: "mol", messages: [{ role: "user", content: "hi" }] },
      ],
      [keyA.key, "GET", "/v1/audit_log"],
    ];
    for (const [token, method, path, json] of denied) {
      const body = await read<Envelope>(await call(path, { method, json, token }), 403);
      expect(body.error, `${method} ${path}`).toMatchObject({
        type: "permission_error",
        code: "insufficient_scope",
      });
    }
    const turn = await call("/v1/responses", {
      method: "POST",
      token: responsesOnly.key,
      json: { conversation: conversationA, input: "scoped turn", max_output_tokens: 4 },
    });
    expect(turn.status).toBe(200);
    await turn.body?.cancel();
    for (const token of [adminKeyA.key, responsesOnly.key])
      expect((await call("/v1/models", { token })).status).toBe(200);
  });

  it("refuses a revoked key with 401; revoking again changes nothing", async () => {
    const doomed = await createKey(tenantA.id, { name: "doomed" });
    expect((await call("/v1/conversations", { token: doomed.key })).status).toBe(200);
    const revoked = await read<ApiKey>(
      await admin(`/v1/admin/tenants/${tenantA.id}/keys/${doomed.id}`, { method: "DELETE" }),
    );
    expect(revoked.revoked_at).toBeGreaterThan(0);
    expect(revoked).not.toHaveProperty("key");
    const refused = await read<Envelope>(await call("/v1/conversations", { token: doomed.key }), 401);
    expect(refused.error.code).toBe("invalid_api_key");
    const again = await read<ApiKey>(
      await admin(`/v1/admin/tenants/${tenantA.id}/keys/${doomed.id}`, { method: "DELETE" }),
    );
    expect(again.revoked_at).toBe(revoked.revoked_at);
    // Another tenant's path does not reach the key.
    const crossed = await admin(`/v1/admin/tenants/${tenantB.id}/keys/${keyA.id}`, { method: "DELETE" });
    expect(crossed.status).toBe(404);
    expect((await call("/v1/conversations", { token: keyA.key })).status).toBe(200);
  });

  it("rotates: the successor works at once; the old key is refused at once, or after its grace period", async () => {
    const first = await createKey(tenantA.id, { name: "rotating", scopes: ["conversations"] });
    // No body at all: the defaults (no grace).
    const second = await read<ApiKey>(
      await call(`/v1/admin/tenants/${tenantA.id}/keys/${first.id}/rotate`, {
        method: "POST",
        token: TEST_ADMIN_TOKEN,
      }),
    );
    expect(second).toMatchObject({ rotated_from: first.id, scopes: ["conversations"], revoked_at: null });
    expect(second.key).toMatch(/^sk-mol-/);
    expect(second.key).not.toBe(first.key);
    expect((await call("/v1/conversations", { token: second.key ?? "" })).status).toBe(200);
    expect((await call("/v1/conversations", { token: first.key })).status).toBe(401);

    const third = await read<ApiKey>(
      await admin(`/v1/admin/tenants/${tenantA.id}/keys/${second.id}/rotate`, {
        method: "POST",
        json: { grace_seconds: 3600 },
      }),
    );
    for (const token of [second.key ?? "", third.key ?? ""])
      expect((await call("/v1/conversations", { token })).status).toBe(200);
    const listed = (await listKeys(tenantA.id)).keys.find((k) => k.id === second.id);
    expect(listed?.revoked_at).toBeGreaterThan(third.created_at + 3500);

    for (const id of [first.id, second.id]) {
      const conflict = await read<Envelope>(
        await admin(`/v1/admin/tenants/${tenantA.id}/keys/${id}/rotate`, { method: "POST", json: {} }),
        409,
      );
      expect(conflict.error.code).toBe("api_key_not_rotatable");
    }
    const tooLong = await admin(`/v1/admin/tenants/${tenantA.id}/keys/${third.id}/rotate`, {
      method: "POST",
      json: { grace_seconds: 8 * 24 * 3600 },
    });
    expect(tooLong.status).toBe(400);
    // Revoking during the grace period cuts it short.
    await read<ApiKey>(
      await admin(`/v1/admin/tenants/${tenantA.id}/keys/${second.id}`, { method: "DELETE" }),
    );
    expect((await call("/v1/conversations", { token: second.key ?? "" })).status).toBe(401);
  });
});

describe("the audit log", () => {
  it("records every change of a tenant, newest first, for its admin-scoped keys only", async () => {
    const log = await auditLog(adminKeyA.key, "?limit=100");
    expect(log.data.every((e) => e.tenant_id === tenantA.id && e.actor === "admin")).toBe(true);
    const actions = log.data.map((e) => e.action).reverse();
    expect(actions[0]).toBe("tenant.created");
    expect(actions.filter((a) => a === "api_key.created")).toHaveLength(5);
    expect(actions.filter((a) => a === "api_key.revoked")).toHaveLength(2);
    expect(actions.filter((a) => a === "api_key.rotated")).toHaveLength(2);
    expect(log.data.find((e) => e.action === "api_key.created" && e.target === keyA.id)).toBeDefined();
    // Refused requests (the admin token matrix, the conflicts, the second revocation) logged nothing.
    expect(actions).toHaveLength(10);

    const ascending = await auditLog(adminKeyA.key, "?order=asc&limit=3");
    expect(ascending.data.map((e) => e.action)).toEqual([
      "tenant.created",
      "api_key.created",
      "api_key.created",
    ]);
    expect(ascending.has_more).toBe(true);
    const next = await auditLog(adminKeyA.key, `?order=asc&limit=3&after=${ascending.last_id ?? ""}`);
    expect(next.data[0]?.id).toBe(log.data.at(-4)?.id);

    const logB = await auditLog(adminKeyB.key, "?limit=100");
    expect(logB.data.map((e) => e.action).reverse()).toEqual([
      "tenant.created",
      "api_key.created",
      "api_key.created",
    ]);
    expect(logB.data.every((e) => e.tenant_id === tenantB.id)).toBe(true);

    const dev = await auditLog(TEST_API_KEY, "?limit=100");
    // The dev key's first use stored the dev tenant and key, once, although many requests used it.
    expect(dev.data.map((e) => [e.tenant_id, e.actor, e.action])).toEqual([
      ["dev", "system", "api_key.created"],
      ["dev", "system", "tenant.created"],
    ]);

    for (const token of [keyA.key, keyB.key])
      expect((await call("/v1/audit_log", { token })).status).toBe(403);
    expect((await call("/v1/audit_log")).status).toBe(401);
    expect((await call("/v1/audit_log?after=conv_1", { token: adminKeyA.key })).status).toBe(400);
  });
});

describe("per-tenant limits (the tenant's plan)", () => {
  it("an admin sets a tenant's limits; they bind that tenant only and are audited", async () => {
    const tenant = await createTenant("small plan");
    const key = await createKey(tenant.id, { scopes: ["conversations", "responses", "chat", "admin"] });
    const limits = await read<{ requests_per_minute: number }>(
      await admin(`/v1/admin/tenants/${tenant.id}/limits`, {
        method: "PUT",
        json: { requests_per_minute: 1 },
      }),
    );
    expect(limits.requests_per_minute).toBe(1);
    expect(
      (
        await admin(`/v1/admin/tenants/${tenant.id}/limits`, {
          method: "PUT",
          json: { requests_per_minute: 0 },
        })
      ).status,
    ).toBe(400);
    const chat = () =>
      call("/v1/chat/completions", {
        token: key.key,
        method: "POST",
        json: { model: "mol:chat", messages: [{ role: "user", content: "hi" }], max_tokens: 4 },
      });
    expect((await chat()).status).toBe(200);
    const refused = await chat();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("1");
    // Another tenant (the dev one) keeps the default limits.
    const other = await mesh.api("/v1/chat/completions", {
      method: "POST",
      json: { model: "mol:chat", messages: [{ role: "user", content: "hi" }], max_tokens: 4 },
    });
    expect(other.status).toBe(200);
    const audit = await read<List<AuditEntry>>(await call("/v1/audit_log", { token: key.key }));
    expect(audit.data.map((e) => e.action)).toContain("tenant.limits_updated");
  });
});
