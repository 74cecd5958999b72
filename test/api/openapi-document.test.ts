import { describe, expect, it } from "vitest";
import { createApp } from "../../workers/src/app/create-app.ts";
import { createMemoryAppDeps } from "../tenancy/create-memory-app-deps.ts";

const DEV_KEY = "sk-dev";
const ADMIN_TOKEN = "adm-token";

type Operation = {
  security?: Array<Record<string, unknown>>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};
type Document = { paths: Record<string, Record<string, Operation>> };

function createTestApp() {
  const { deps } = createMemoryAppDeps(DEV_KEY, {
    adminToken: ADMIN_TOKEN,
    telemetry: { debug: false, write: () => undefined },
  });
  return createApp(() => deps);
}

async function readDocument(): Promise<Document> {
  const response = await createTestApp().request("/openapi.json");
  expect(response.status).toBe(200);
  return (await response.json()) as Document;
}

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );

describe("GET /openapi.json", () => {
  it("documents every /v1 route the app serves, from the routes themselves", async () => {
    const app = createTestApp();
    const document = await readDocument();
    // Hono's `:name` is the document's `{name}`; middleware is registered for method ALL.
    const served = app.routes
      .filter((route) => route.method !== "ALL" && route.path.startsWith("/v1/"))
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    const documented = operationsOf(document).map(({ method, path }) => `${method} ${path}`);
    expect(new Set(served)).toEqual(new Set(documented.filter((operation) => operation.includes(" /v1/"))));
    expect(documented).toEqual(
      expect.arrayContaining(["get /livez", "get /readyz", "get /healthz", "get /v1/conversations"]),
    );
  });

  it("declares the statuses the shared middleware answers with, each with the error envelope", async () => {
    for (const { path, method, operation } of operationsOf(await readDocument())) {
      const where = `${method} ${path}`;
      const statuses = Object.keys(operation.responses);
      if (operation.security) expect(statuses, where).toContain("401");
      if (operation.requestBody?.content["application/json"] && !path.startsWith("/v1/hooks/"))
        expect(statuses, where).toEqual(expect.arrayContaining(["400", "413", "415"]));
      for (const [status, response] of Object.entries(operation.responses)) {
        // The readiness probes answer 503 with their own `{status}` body.
        if (Number(status) < 400 || (status === "503" && !path.startsWith("/v1/"))) continue;
        expect(JSON.stringify(response.content?.["application/json"]?.schema), `${where} ${status}`).toMatch(
          /#\/components\/schemas\/(ErrorResponse|GenuiComponentRejected)/,
        );
      }
    }
  });

  it("says what the handlers require: a chat tool message needs content and tool_call_id", async () => {
    const document = (await (await createTestApp().request("/openapi.json")).json()) as {
      components: {
        schemas: Record<
          string,
          { oneOf?: Array<{ properties: { role: { enum: string[] } }; required: string[] }> }
        >;
      };
    };
    const tool = document.components.schemas["ChatMessage"]?.oneOf?.find(
      (message) => message.properties.role.enum[0] === "tool",
    );
    expect(new Set(tool?.required)).toEqual(new Set(["role", "content", "tool_call_id"]));
  });
});

describe("an unserved method", () => {
  it("is a 405 with Allow on a path the API serves, in the OpenAI envelope", async () => {
    const app = createTestApp();
    const response = await app.request("/v1/models", {
      method: "DELETE",
      headers: { authorization: `Bearer ${DEV_KEY}` },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    expect(await response.json()).toEqual({
      error: {
        message: "Invalid method for URL (DELETE /v1/models).",
        type: "invalid_request_error",
        param: null,
        code: "method_not_allowed",
      },
    });
    const response_ = await app.request("/v1/responses/resp_x", {
      method: "PUT",
      headers: { authorization: `Bearer ${DEV_KEY}` },
    });
    expect(response_.status).toBe(405);
    expect(response_.headers.get("allow")).toBe("DELETE, GET, HEAD");
  });

  it("is still a 404 on a path the API does not serve", async () => {
    const response = await createTestApp().request("/v2/models", { method: "PATCH" });
    expect(response.status).toBe(404);
    expect(response.headers.get("allow")).toBeNull();
  });
});

describe("validation through the routes' schemas", () => {
  it("answers a bad query, path or body with the envelope naming the field", async () => {
    const app = createTestApp();
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const query = await app.request("/v1/admin/tenants?limit=0", { headers: admin });
    expect(query.status).toBe(400);
    expect(await query.json()).toMatchObject({
      error: { type: "invalid_request_error", param: "limit", code: "invalid_value" },
    });
    const path = await app.request(`/v1/admin/tenants/${"t".repeat(129)}`, { headers: admin });
    expect(path.status).toBe(400);
    expect(await path.json()).toMatchObject({ error: { param: "id" } });
    const body = await app.request("/v1/admin/tenants", {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ name: "a", plan: "gold" }),
    });
    expect(body.status).toBe(400);
    expect(await body.json()).toMatchObject({
      error: {
        param: "plan",
        code: "unknown_parameter",
        message: "Unrecognized request argument supplied: plan",
      },
    });
  });

  it("checks the body's media type, size and syntax before its schema", async () => {
    const app = createTestApp();
    const post = (body: BodyInit | null, headers: Record<string, string>) =>
      app.request("/v1/admin/tenants", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
        body,
      });
    const codeOf = async (response: Response) =>
      [response.status, ((await response.json()) as { error: { code: string } }).error.code] as const;
    expect(await codeOf(await post('{"name":"a"}', {}))).toEqual([415, "unsupported_media_type"]);
    expect(await codeOf(await post('{"name":"a"}', { "content-type": "text/plain" }))).toEqual([
      415,
      "unsupported_media_type",
    ]);
    expect(await codeOf(await post("{", { "content-type": "application/json" }))).toEqual([
      400,
      "invalid_json",
    ]);
    expect(
      await codeOf(await post(new Uint8Array([0x7b, 0xff, 0x7d]), { "content-type": "application/json" })),
    ).toEqual([400, "invalid_json"]);
    const huge = JSON.stringify({ name: "x".repeat(1024 * 1024) });
    expect(await codeOf(await post(huge, { "content-type": "application/json" }))).toEqual([
      413,
      "payload_too_large",
    ]);
    const ok = await post('{"name":"a"}', { "content-type": "application/json; charset=utf-8" });
    expect(ok.status).toBe(200);
  });
});
