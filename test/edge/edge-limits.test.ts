import { afterAll, describe, expect, it } from "vitest";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

const meshes: TestMesh[] = [];
afterAll(async () => {
  for (const mesh of meshes) await mesh.stop();
});

async function mesh(edgeVars: Record<string, string>): Promise<TestMesh> {
  const started = await startTestMesh({ edgeVars });
  meshes.push(started);
  return started;
}

async function conversation(m: TestMesh): Promise<string> {
  return ((await (await m.api("/v1/conversations", { method: "POST", json: {} })).json()) as { id: string })
    .id;
}

describe("per-tenant limits", () => {
  it("limits writes (conversations, webhook endpoints) on their own bucket, with the same headers and 429", async () => {
    const m = await startTestMesh({ withNode: false, edgeVars: { MOL_DEFAULT_WPM: "3" } });
    meshes.push(m);
    const create = () => m.api("/v1/conversations", { method: "POST", json: {} });
    const first = await create();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("3");
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("2");
    // Bad input is refused before it is stored, so it costs nothing; reads are never counted.
    expect((await m.api("/v1/conversations", { method: "POST", json: { metadata: 5 } })).status).toBe(400);
    expect((await m.api("/v1/conversations")).status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    const removed = await m.api(`/v1/conversations/${id}`, { method: "DELETE" });
    expect(removed.status).toBe(200);
    expect(removed.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    const endpoint = await m.api("/v1/webhook_endpoints", {
      method: "POST",
      json: { url: "https://example.com/hook", events: ["conversation.turn.completed"] },
    });
    expect(endpoint.status).toBe(200);
    expect(endpoint.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    for (const refused of [
      await create(),
      await m.api("/v1/webhook_endpoints", {
        method: "POST",
        json: { url: "https://example.com/hook2", events: ["conversation.turn.completed"] },
      }),
    ]) {
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThan(0);
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    }
    const list = (await (await m.api("/v1/conversations")).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(0);
  }, 180_000);

  it("answers 429 with retry-after and x-ratelimit headers past the requests-per-minute limit", async () => {
    const m = await mesh({ MOL_DEFAULT_RPM: "2" });
    const id = await conversation(m);
    // A rejected request is validated before the limiter: it costs nothing.
    expect(
      (await m.api("/v1/responses", { method: "POST", json: { conversation: id, input: "" } })).status,
    ).toBe(400);
    const turn = () =>
      m.api("/v1/responses", {
        method: "POST",
        json: { conversation: id, input: "hi", max_output_tokens: 4 },
      });
    const first = await turn();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    expect((await turn()).status).toBe(200);
    const refused = await turn();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    const items = (await (await m.api(`/v1/conversations/${id}/items`)).json()) as { data: unknown[] };
    expect(items.data).toHaveLength(4);
  }, 180_000);

  it("answers insufficient_quota once the month's tokens, counted from the hops, are spent", async () => {
    const m = await mesh({ MOL_DEFAULT_MONTHLY_TOKENS: "300" });
    const id = await conversation(m);
    const first = await m.api("/v1/responses", {
      method: "POST",
      json: { conversation: id, input: "hi", max_output_tokens: 4 },
    });
    expect(first.status).toBe(200);
    // The turn's tokens (route + answer + summary) are charged once its summary is in; then the quota is spent.
    await expect
      .poll(
        async () => {
          const response = await m.api("/v1/chat/completions", {
            method: "POST",
            json: { model: "mol:chat", messages: [{ role: "user", content: "again" }], max_tokens: 4 },
          });
          return response.status === 429
            ? ((await response.json()) as { error: { code: string } }).error.code
            : response.status;
        },
        { timeout: 10_000 },
      )
      .toBe("insufficient_quota");
  }, 180_000);

  it("charges chat completions: their tokens spend the per-minute token limit until one is refused", async () => {
    const m = await mesh({ MOL_DEFAULT_TPM: "300" });
    const complete = () =>
      m.api("/v1/chat/completions", {
        method: "POST",
        json: { model: "mol:chat", messages: [{ role: "user", content: "hello there" }], max_tokens: 4 },
      });
    // Each completion costs its prompt plus a few answer tokens, charged once its stream ends: well before the
    // 25th, the 300 tokens are spent (refilling at 5 a second), unless chat completions cost nothing.
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 25 && !refused; i++) {
      const response = await complete();
      statuses.push(response.status);
      if (response.status === 429) refused = response;
      else await response.arrayBuffer();
    }
    expect(statuses[0]).toBe(200);
    expect(refused?.status).toBe(429);
    const body = (await refused?.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("rate_limit_exceeded");
    expect(body.error.message).toContain("tokens per minute");
    expect(refused?.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
  }, 180_000);
});
