import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;
let conversationId: string;

beforeAll(async () => {
  // Generous limits: the fuzzer must meet validation, not the rate limiter.
  mesh = await startTestMesh({ edgeVars: { MOL_DEFAULT_RPM: "100000" } });
  conversationId = (
    (await (await mesh.api("/v1/conversations", { method: "POST", json: {} })).json()) as { id: string }
  ).id;
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

async function itemCount(): Promise<number> {
  const response = await mesh.api(`/v1/conversations/${conversationId}/items?limit=100`);
  return ((await response.json()) as { data: unknown[] }).data.length;
}

/** Bodies near the valid shape (most fields right, one wrong) and far from it (any JSON, any bytes). */
const bodies = () =>
  fc.oneof(
    fc
      .record(
        {
          conversation: fc.oneof(
            fc.constant(conversationId),
            fc.string(),
            fc.integer(),
            fc.record({ id: fc.string() }),
          ),
          input: fc.oneof(
            fc.string({ maxLength: 40 }),
            fc.constant(""),
            fc.array(fc.anything(), { maxLength: 2 }),
            fc.integer(),
          ),
          stream: fc.oneof(fc.boolean(), fc.string(), fc.constant(null)),
          model: fc.oneof(fc.constant("mol"), fc.string({ maxLength: 12 })),
          max_output_tokens: fc.oneof(fc.integer({ min: -5, max: 3 }), fc.string()),
          metadata: fc.dictionary(
            fc.string({ maxLength: 70 }),
            fc.oneof(fc.string({ maxLength: 20 }), fc.integer()),
            { maxKeys: 20 },
          ),
          extra: fc.anything(),
        },
        { requiredKeys: [] },
      )
      .map((body) => JSON.stringify(body)),
    fc.json({ maxDepth: 3 }),
    fc.string({ maxLength: 60 }),
    fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
  );

const headers = () =>
  fc.record(
    {
      "content-type": fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "",
      ),
      "idempotency-key": fc.string({ maxLength: 300 }).filter((k) => /^[\x20-\x7e]*$/.test(k)),
    },
    { requiredKeys: ["content-type"] },
  );

describe("fuzzing the running edge", () => {
  it("never answers 5xx and never stores an event for a rejected request", async () => {
    let expected = await itemCount();
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/v1/responses", "/v1/chat/completions", "/v1/conversations"),
        bodies(),
        headers(),
        async (path, body, extraHeaders) => {
          const response = await mesh.api(path, { method: "POST", body, headers: extraHeaders });
          expect(response.status, `${path} ${body}`).toBeLessThan(500);
          statuses.add(response.status);
          const text = await response.text();
          if (response.status >= 400) expect(JSON.parse(text)).toHaveProperty("error.message");
          // A turn that was accepted adds its user message and answer; anything rejected adds nothing.
          if (path === "/v1/responses" && response.status === 200) expected += 2;
          expect(await itemCount()).toBe(expected);
        },
      ),
      { numRuns: 120, seed: 20261130 },
    );
    // The generator reaches past the media-type check into validation, not one early rejection over and over.
    expect([...statuses].sort()).toEqual(expect.arrayContaining([400, 415]));
  }, 240_000);
});
