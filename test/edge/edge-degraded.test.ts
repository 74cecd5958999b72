import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let mesh: TestMesh;

beforeAll(async () => {
  mesh = await startTestMesh({ withNode: false });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("a degraded fleet", () => {
  it("with no GPU node: /healthz is 503 and a turn is a clear 503", async () => {
    const health = await fetch(`${mesh.edge.url}/healthz`);
    expect(health.status).toBe(503);
    const created = await mesh.api("/v1/conversations", { method: "POST", json: {} });
    const { id } = (await created.json()) as { id: string };
    const response = await mesh.api("/v1/responses", {
      method: "POST",
      json: { conversation: id, input: "anyone?" },
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status, JSON.stringify(body)).toBe(503);
    expect(body.error.code).toBe("no_responders");
    const items = (await (await mesh.api(`/v1/conversations/${id}/items`)).json()) as { data: unknown[] };
    expect(items.data).toHaveLength(1);
  });

  describe("when the route hop fails", () => {
    let node: TestNode;
    beforeAll(async () => {
      // A node without the router adapter: every route hop fails (unknown_adapter), answers still work.
      const models = inject("models");
      const { l0: _router, ...specialists } = models.adapters;
      node = await startTestNode({ natsUrl: mesh.nats.url, models: { ...models, adapters: specialists } });
    });
    afterAll(async () => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
      await node?.stop();
    });

    it("falls back to the default specialist, then to the previous one, and records why", async () => {
      const created = await mesh.api("/v1/conversations", { method: "POST", json: {} });
      const { id } = (await created.json()) as { id: string };
      const turn = async (input: string, model?: string) => {
        const response = await mesh.api("/v1/responses", {
          method: "POST",
          json: { conversation: id, input, max_output_tokens: 8, ...(model ? { model } : {}) },
        });
        expect(response.status).toBe(200);
        return (
          (await response.json()) as {
            mol: { label: string; source: string; fallback?: { code: string; to: string } };
          }
        ).mol;
      };
      expect(await turn("first")).toMatchObject({
        label: "chat",
        source: "fallback",
        fallback: { code: "unknown_adapter", to: "default" },
      });
      expect(await turn("forced", "mol:coding")).toMatchObject({ label: "coding", source: "forced" });
      expect(await turn("third")).toMatchObject({
        label: "coding",
        source: "fallback",
        fallback: { to: "previous" },
      });
    });
  });
});
