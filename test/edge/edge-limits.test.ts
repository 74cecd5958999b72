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
