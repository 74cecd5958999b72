import { describe, expect, it } from "vitest";
import { createApp } from "../../workers/src/app/create-app.ts";
import { resolveSandboxOrigin } from "../../workers/src/app/routes/genui-routes.ts";
import type { GenuiComponent } from "../../workers/src/genui/genui-component-store.ts";
import { createMemoryAppDeps } from "../tenancy/create-memory-app-deps.ts";

/**
 * The sandbox origin comes from config (MOL_GENUI_SANDBOX_ORIGIN, in production its own hostname, see
 * wrangler.toml): the app under a public API hostname, with an in-memory component store.
 */

const DEV_KEY = "sk-dev";
const API = "https://api.example.com";
const SANDBOX = "https://genui.example-usercontent.com";
const COMPONENT = `import { Card, Text } from "@molmesh/ui";
export default function Hello() {
  return <Card title="Hi"><Text>Hello</Text></Card>;
}`;
function createTestApp(genuiSandboxOrigin: string | undefined) {
  const components = new Map<string, GenuiComponent>();
  const { deps } = createMemoryAppDeps(DEV_KEY, {
    genuiComponents: {
      create: (component) => {
        components.set(component.id, component);
        return Promise.resolve();
      },
      get: (tenantId, id) => Promise.resolve([components.get(id)].find((c) => c?.tenantId === tenantId)),
      getForRender: (id) => Promise.resolve(components.get(id)),
    },
    genuiSandboxOrigin,
  });
  const app = createApp(() => deps);
  const post = () =>
    app.request(`${API}/v1/genui/components`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEV_KEY}`, "content-type": "text/jsx" },
      body: COMPONENT,
    });
  return { app, components, post };
}

describe("resolveSandboxOrigin", () => {
  it("takes the configured origin whatever host the request came in on, without path or slash", () => {
    for (const request of [`${API}/x`, "http://127.0.0.1:8787/x", "http://genui-sandbox.localhost:8787/"])
      expect(resolveSandboxOrigin(`${SANDBOX}/some/path/`, new URL(request))).toBe(SANDBOX);
  });

  it("falls back to genui-sandbox.localhost on the request's port only for a loopback API", () => {
    expect(resolveSandboxOrigin(undefined, new URL("http://127.0.0.1:8787/v1"))).toBe(
      "http://genui-sandbox.localhost:8787",
    );
    expect(resolveSandboxOrigin(undefined, new URL(`${API}/v1`))).toBeUndefined();
    expect(resolveSandboxOrigin(undefined, new URL("http://localhost/v1"))).toBeUndefined();
  });
});

describe("a configured sandbox origin in the app", () => {
  it("is where the render page frames the component, and the only host that serves the frame", async () => {
    const { app, post } = createTestApp(SANDBOX);
    const created = await post();
    expect(created.status).toBe(200);
    const body = (await created.json()) as { id: string; render_url: string; sandbox_origin: string };
    expect(body.sandbox_origin).toBe(SANDBOX);
    expect(body.render_url.startsWith(`${API}/playground/render/${body.id}?t=`)).toBe(true);

    const host = await app.request(body.render_url);
    expect(host.status).toBe(200);
    expect(host.headers.get("content-security-policy")).toContain(`frame-src ${SANDBOX}`);
    const frameUrl = `${SANDBOX}/genui/frame/${body.id}?t=${new URL(body.render_url).searchParams.get("t") ?? ""}`;
    expect(await host.text()).toContain(frameUrl.replace(/&/g, "&amp;"));

    const frame = await app.request(frameUrl);
    expect(frame.status).toBe(200);
    const csp = frame.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`script-src ${SANDBOX} 'unsafe-eval'`);
    expect(csp).toContain(`frame-ancestors ${API}`);
    // Neither the API host nor the old local sandbox name serves component code; the sandbox host serves no API.
    expect((await app.request(frameUrl.replace(SANDBOX, API))).status).toBe(404);
    expect((await app.request(`${SANDBOX}/v1/models`)).status).toBe(404);
    expect((await app.request("http://genui-sandbox.localhost:8787/genui/runtime.js")).status).toBe(404);
  });

  it("unset on a public API hostname: 503 genui_sandbox_unconfigured and nothing stored", async () => {
    const { components, post } = createTestApp(undefined);
    const response = await post();
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "genui_sandbox_unconfigured",
    );
    expect(components.size).toBe(0);
  });
});
