import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;
const SLOW_MARKER = "hold-this-one";
let conversationId: string;

beforeAll(async () => {
  // Prompts that carry SLOW_MARKER are held before decoding, so a request is reliably still running when a test
  // sends its twin (the tiny model would otherwise finish before the second request arrives on a fast machine).
  mesh = await startTestMesh({
    wrapEngine: (engine) => ({
      ...engine,
      generate: async (request) => {
        if (request.prompt.includes(SLOW_MARKER)) await new Promise((r) => setTimeout(r, 1_500));
        return engine.generate(request);
      },
    }),
  });
  const created = await mesh.api("/v1/conversations", { method: "POST", json: {} });
  conversationId = ((await created.json()) as { id: string }).id;
  const first = await mesh.api("/v1/responses", {
    method: "POST",
    json: { conversation: conversationId, input: "first turn", max_output_tokens: 8 },
  });
  expect(first.status).toBe(200);
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

async function itemIds(): Promise<string[]> {
  const response = await mesh.api(`/v1/conversations/${conversationId}/items?order=asc&limit=100`);
  return ((await response.json()) as { data: Array<{ id: string }> }).data.map((i) => i.id);
}

type Envelope = { error: { message: string; type: string; code: string; param: string | null } };

const post = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  mesh.api("/v1/responses", { method: "POST", body, headers });

describe("bad input to POST /v1/responses", () => {
  const valid = () => ({ conversation: conversationId, input: "hello" });
  const cases: Array<[string, () => Promise<Response>, number, string?]> = [
    ["malformed JSON", () => post("{not json"), 400, "invalid_json"],
    [
      "invalid UTF-8",
      () =>
        mesh.api("/v1/responses", {
          method: "POST",
          body: new Uint8Array([0x7b, 0xff, 0x7d]),
          headers: { "content-type": "application/json" },
        }),
      400,
      "invalid_json",
    ],
    ["a wrong media type", () => post(JSON.stringify(valid()), { "content-type": "text/plain" }), 415],
    ["a wrong type", () => post(JSON.stringify({ ...valid(), stream: "yes" })), 400],
    ["an empty input", () => post(JSON.stringify({ ...valid(), input: "   " })), 400],
    // Issue 14: a request without `conversation` is a new implicit one; naming two places to continue is not.
    [
      "a conversation and a previous response",
      () => post(JSON.stringify({ ...valid(), previous_response_id: `resp_turn_${"0".repeat(48)}` })),
      400,
    ],
    ["an unknown field", () => post(JSON.stringify({ ...valid(), surprise: 1 })), 400],
    // Issue 12: messages up to 64 KiB are accepted (clipped in the views); the limit is 65,536 bytes.
    ["an oversize message", () => post(JSON.stringify({ ...valid(), input: "x".repeat(65_537) })), 400],
    [
      "an oversize body",
      () => post(JSON.stringify({ ...valid(), metadata: { a: "y".repeat(2_000_000) } })),
      413,
    ],
    [
      "an unknown conversation",
      () => post(JSON.stringify({ ...valid(), conversation: `conv_${"0".repeat(32)}` })),
      404,
    ],
    [
      "a malformed conversation id",
      () => post(JSON.stringify({ ...valid(), conversation: "../../etc" })),
      404,
    ],
    ["an unknown model", () => post(JSON.stringify({ ...valid(), model: "gpt-4o" })), 404],
    [
      "no API key",
      () =>
        fetch(`${mesh.edge.url}/v1/responses`, {
          method: "POST",
          body: JSON.stringify(valid()),
          headers: { "content-type": "application/json" },
        }),
      401,
      "invalid_api_key",
    ],
    [
      "a wrong API key",
      () =>
        fetch(`${mesh.edge.url}/v1/responses`, {
          method: "POST",
          body: JSON.stringify(valid()),
          headers: { "content-type": "application/json", authorization: "Bearer sk-wrong" },
        }),
      401,
      "invalid_api_key",
    ],
  ];

  it.each(cases)("%s → %i with the error envelope, timeline unchanged", async (_name, send, status, code) => {
    const before = await itemIds();
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await response.json()) as Envelope;
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(typeof body.error.type).toBe("string");
    if (code) expect(body.error.code).toBe(code);
    expect(await itemIds()).toEqual(before);
  });

  it("bad metadata and items on POST /v1/conversations are refused", async () => {
    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    for (const body of [
      { metadata: tooMany },
      { metadata: { ["k".repeat(65)]: "v" } },
      { metadata: { k: "v".repeat(513) } },
      { items: [{}] },
    ]) {
      const response = await mesh.api("/v1/conversations", { method: "POST", json: body });
      expect(response.status).toBe(400);
    }
  });

  it("unknown conversations are 404 on every conversation route", async () => {
    const unknown = `conv_${"a".repeat(32)}`;
    for (const [method, path] of [
      ["GET", ""],
      ["GET", "/items"],
      ["DELETE", ""],
    ] as const) {
      const response = await mesh.api(`/v1/conversations/${unknown}${path}`, { method });
      expect(response.status).toBe(404);
    }
  });
});

describe("Idempotency-Key", () => {
  it("replays a repeated request, refuses a changed body, and stores one turn", async () => {
    const before = await itemIds();
    const body = { conversation: conversationId, input: "idempotent hello", max_output_tokens: 8 };
    const headers = { "idempotency-key": "key-1" };
    const first = await mesh.api("/v1/responses", { method: "POST", json: body, headers });
    const again = await mesh.api("/v1/responses", { method: "POST", json: body, headers });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    const [a, b] = (await Promise.all([first.json(), again.json()])) as Array<{
      id: string;
      output: unknown;
    }>;
    expect(b?.id).toBe(a?.id);
    expect(b?.output).toEqual(a?.output);
    const changed = await mesh.api("/v1/responses", {
      method: "POST",
      json: { ...body, input: "other" },
      headers,
    });
    expect(changed.status).toBe(422);
    expect((await itemIds()).length).toBe(before.length + 2);
  });

  it("answers 409 while the first request with the key is still running", async () => {
    const body = { conversation: conversationId, input: `slow one ${SLOW_MARKER}`, max_output_tokens: 16 };
    const headers = { "idempotency-key": "key-2" };
    const first = mesh.api("/v1/responses", { method: "POST", json: body, headers });
    await new Promise((r) => setTimeout(r, 200));
    const second = mesh.api("/v1/responses", { method: "POST", json: body, headers });
    // Whichever reached the conversation first runs; the other finds it in flight.
    const [a, b] = await Promise.all([first, second]);
    const refused = a.status === 409 ? a : b;
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect(refused.headers.get("retry-after")).toBe("1");
  });

  it("replays a streamed request as the same event stream", async () => {
    const body = { conversation: conversationId, input: "stream me", stream: true, max_output_tokens: 8 };
    const headers = { "idempotency-key": "key-3" };
    const first = await (await mesh.api("/v1/responses", { method: "POST", json: body, headers })).text();
    const again = await (await mesh.api("/v1/responses", { method: "POST", json: body, headers })).text();
    const deltas = (sse: string) =>
      sse
        .split("\n")
        .filter((l) => l.startsWith("data:") && l.includes("output_text.delta"))
        .map((l) => (JSON.parse(l.slice(5)) as { delta: string }).delta)
        .join("");
    expect(deltas(again)).toBe(deltas(first));
    const lastEvent = (sse: string) =>
      sse
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("event:"))
        .at(-1);
    expect(lastEvent(again)).toBe(lastEvent(first));
    expect(lastEvent(again)).toMatch(/response\.(completed|incomplete)/);
  });
});
