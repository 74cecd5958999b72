import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN, TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;
let client: OpenAI;

beforeAll(async () => {
  mesh = await startTestMesh({ adminToken: TEST_ADMIN_TOKEN });
  // The official client, unchanged: only its base URL and key point at molmesh.
  client = new OpenAI({ apiKey: TEST_API_KEY, baseURL: `${mesh.edge.url}/v1`, maxRetries: 0 });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

const SHORT = { max_output_tokens: 16 } as const;
/** The tiny test model rarely stops on its own: a turn cut by `max_output_tokens` is finished too. */
const FINISHED = ["completed", "incomplete"];
/** The conversation a stored response id names (see workers/src/conversation/item-id.ts). */
const conversationOf = (responseId: string) => `conv_${responseId.slice("resp_turn_".length, -16)}`;

async function expectStatus(promise: Promise<unknown>, status: number): Promise<APIError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  expect((error as APIError).status).toBe(status);
  return error as APIError;
}

type Listed = { data: Array<{ id: string; metadata: Record<string, string> }> };
/** The tenant's conversations as `GET /v1/conversations` lists them (the openai client has no list call). */
async function listConversations(): Promise<Listed["data"]> {
  return ((await (await mesh.api("/v1/conversations?limit=100")).json()) as Listed).data;
}

async function itemCount(conversationId: string): Promise<number> {
  return (await client.conversations.items.list(conversationId, { limit: 100 })).data.length;
}

async function waitFor(
  id: string,
  done: (r: OpenAI.Responses.Response) => boolean,
): Promise<OpenAI.Responses.Response> {
  for (let i = 0; i < 300; i++) {
    const response = await client.responses.retrieve(id);
    if (done(response)) return response;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`response ${id} never settled`);
}

describe("Responses parity with unmodified clients", () => {
  it("keeps a response made without a conversation: retrieve, input items, delete", async () => {
    const listed = (await listConversations()).length;
    const response = await client.responses.create({
      input: "say hello",
      instructions: "Be brief.",
      ...SHORT,
    });
    expect(FINISHED).toContain(response.status);
    expect(response.conversation).toBeNull();
    expect(response).toMatchObject({ store: true, instructions: "Be brief.", max_output_tokens: 16 });
    const again = await client.responses.retrieve(response.id);
    expect(again.id).toBe(response.id);
    expect(again.output_text).toBe(response.output_text);
    expect(again).toMatchObject({ instructions: "Be brief.", max_output_tokens: 16, conversation: null });
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: "message", role: "user" });
    // An implicit conversation is not one the tenant made: it is not listed.
    expect((await listConversations()).length).toBe(listed);

    await client.responses.delete(response.id);
    await expectStatus(client.responses.retrieve(response.id), 404);
    await expectStatus(client.responses.inputItems.list(response.id), 404);
    // Chaining from a deleted response is refused and stores nothing.
    const before = await itemCount(conversationOf(response.id));
    await expectStatus(client.responses.create({ input: "more", previous_response_id: response.id }), 404);
    expect(await itemCount(conversationOf(response.id))).toBe(before);
  });

  it("chains with previous_response_id and forks from a response that is not the latest", async () => {
    const first = await client.responses.create({ input: "name a colour", ...SHORT });
    const second = await client.responses.create({
      input: "and another",
      previous_response_id: first.id,
      ...SHORT,
    });
    expect(second.previous_response_id).toBe(first.id);
    // The latest response: the chain continues the same conversation.
    expect(conversationOf(second.id)).toBe(conversationOf(first.id));
    expect(await itemCount(conversationOf(first.id))).toBe(4);

    const fork = await client.responses.create({
      input: "a third",
      previous_response_id: first.id,
      ...SHORT,
    });
    expect(FINISHED).toContain(fork.status);
    expect(conversationOf(fork.id)).not.toBe(conversationOf(first.id));
    // The fork holds a copy up to `first`, then its own turn; the original is untouched.
    const forkItems = await client.conversations.items.list(conversationOf(fork.id), { order: "asc" });
    const texts = forkItems.data.map((item) =>
      item.type === "message" ? (item.content[0] as { text: string }).text : "",
    );
    expect(texts[0]).toBe("name a colour");
    expect(texts[2]).toBe("a third");
    expect(forkItems.data).toHaveLength(4);
    expect(await itemCount(conversationOf(first.id))).toBe(4);
    // The fork chains on from its own latest.
    const onFork = await client.responses.create({ input: "go on", previous_response_id: fork.id, ...SHORT });
    expect(conversationOf(onFork.id)).toBe(conversationOf(fork.id));
  });

  it("takes item arrays: system, developer, earlier user and assistant messages", async () => {
    const response = await client.responses.create({
      input: [
        { role: "system", content: "You are terse." },
        { role: "developer", content: [{ type: "input_text", text: "Answer in English." }] },
        { role: "user", content: "hi" },
        {
          type: "message",
          id: "msg_prior",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Hello.", annotations: [] }],
        },
        { role: "user", content: "what did you say?" },
      ],
      ...SHORT,
    });
    expect(FINISHED).toContain(response.status);
    expect(response.instructions).toBe("You are terse.\n\nAnswer in English.");
    const items = await client.responses.inputItems.list(response.id, { order: "asc" });
    expect(items.data.map((item) => (item.type === "message" ? item.role : item.type))).toEqual([
      "user",
      "assistant",
      "user",
    ]);
  });

  it("store: false keeps nothing", async () => {
    const response = await client.responses.create({ input: "hello", store: false, ...SHORT });
    expect(FINISHED).toContain(response.status);
    expect((response as { store?: boolean }).store).toBe(false);
    await expectStatus(client.responses.retrieve(response.id), 404);
  });

  it("runs background turns detached: poll, then cancel", async () => {
    const queued = await client.responses.create({ input: "count to five", background: true, ...SHORT });
    expect(["queued", "in_progress"]).toContain(queued.status);
    expect(queued.background).toBe(true);
    const done = await waitFor(queued.id, (r) => r.status !== "queued" && r.status !== "in_progress");
    expect(FINISHED).toContain(done.status);
    expect(done.output_text.length).toBeGreaterThan(0);

    const long = await client.responses.create({
      input: "write a very long story",
      background: true,
      max_output_tokens: 2048,
    });
    const cancelled = await client.responses.cancel(long.id);
    // 2048 tokens take the tiny model seconds; the cancel lands long before.
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.error?.code).toBe("cancelled");
    const settled = await client.responses.retrieve(long.id);
    expect(settled.status).toBe(cancelled.status);
    // Only background responses can be cancelled.
    // Another id in the same conversation: its last character changed to one it is not.
    const other = done.id.replace(/.$/, (last) => (last === "0" ? "1" : "0"));
    await expectStatus(client.responses.cancel(other), 404);
  });

  it("refuses to cancel a foreground response", async () => {
    const response = await client.responses.create({ input: "hi", ...SHORT });
    await expectStatus(client.responses.cancel(response.id), 400);
  });

  it("resumes a stream with starting_after: replay, then live, numbers continuing", async () => {
    const stream = await client.responses.create({
      input: "tell me about rivers",
      background: true,
      stream: true,
      max_output_tokens: 48,
    });
    let responseId = "";
    let lastSeen = -1;
    for await (const event of stream) {
      if (event.type === "response.created") responseId = event.response.id;
      lastSeen = event.sequence_number;
      if (lastSeen >= 3) break; // the client goes away mid-stream
    }
    expect(responseId).toMatch(/^resp_/);
    const resumed = await client.responses.retrieve(responseId, { stream: true, starting_after: lastSeen });
    const numbers: number[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of resumed) {
      numbers.push(event.sequence_number);
      if (event.type === "response.completed" || event.type === "response.incomplete")
        completed = event.response;
    }
    expect(numbers[0]).toBe(lastSeen + 1);
    expect(numbers).toEqual(numbers.map((_, i) => lastSeen + 1 + i));
    expect(completed?.id).toBe(responseId);
    expect((await client.responses.retrieve(responseId)).output_text).toBe(
      completed?.output
        .flatMap((o) => (o.type === "message" ? o.content : []))
        .map((c) => (c as { text: string }).text)
        .join(""),
    );
  });

  it("runs a retry anew after its non-background stream dropped (same Idempotency-Key)", async () => {
    const key = `retry-${Date.now()}`;
    const body = { input: "write a long poem about the sea", stream: true, max_output_tokens: 2048 };
    const first = await mesh.api("/v1/responses", {
      method: "POST",
      json: body,
      headers: { "idempotency-key": key },
    });
    expect(first.status).toBe(200);
    const reader = first.body?.getReader();
    // A read returns whatever the transport delivered: the id may arrive split across chunks, so read until it is whole.
    const decoder = new TextDecoder();
    let seen = "";
    let firstId = "";
    while (reader && firstId === "") {
      const chunk = await reader.read();
      if (chunk.done) break;
      seen += decoder.decode(chunk.value, { stream: true });
      firstId = /"id":"(resp_[^"]+)"/.exec(seen)?.[1] ?? "";
    }
    expect(firstId).toMatch(/^resp_/);
    await reader?.cancel();
    const dropped = await waitFor(firstId, (r) => r.status !== "in_progress");
    expect(dropped.status).toBe("cancelled");
    const retry = await mesh.api("/v1/responses", {
      method: "POST",
      json: body,
      headers: { "idempotency-key": key },
    });
    expect(retry.status).toBe(200);
    const text = await retry.text();
    expect(text).toMatch(/response\.(completed|incomplete)/);
    // A new run, not a replay of the cancellation: another response, in the same (key-derived) conversation.
    const retryId = /"id":"(resp_[^"]+)"/.exec(text)?.[1] ?? "";
    expect(retryId).not.toBe(firstId);
    expect(conversationOf(retryId)).toBe(conversationOf(firstId));
    // The key now names the new run: a further retry replays it; another body is refused.
    const replay = await mesh.api("/v1/responses", {
      method: "POST",
      json: body,
      headers: { "idempotency-key": key },
    });
    expect(await replay.text()).toContain(retryId);
    const changed = await mesh.api("/v1/responses", {
      method: "POST",
      json: { ...body, stream: false },
      headers: { "idempotency-key": key },
    });
    expect(changed.status).toBe(422);
  });

  it("updates conversation metadata and retrieves and deletes items (a tombstone)", async () => {
    const conversation = await client.conversations.create({ metadata: { a: "1" } });
    const updated = await client.conversations.update(conversation.id, { metadata: { a: "2", b: "3" } });
    expect(updated.metadata).toEqual({ a: "2", b: "3" });
    expect((await client.conversations.retrieve(conversation.id)).metadata).toEqual({ a: "2", b: "3" });
    const listed = (await listConversations()).find((c) => c.id === conversation.id);
    expect(listed?.metadata).toEqual({ a: "2", b: "3" });

    const turn = await client.responses.create({ conversation: conversation.id, input: "hello", ...SHORT });
    const assistantId = turn.output[0]?.id ?? "";
    const item = await client.conversations.items.retrieve(assistantId, { conversation_id: conversation.id });
    expect(item).toMatchObject({ id: assistantId, type: "message", role: "assistant" });
    const userId =
      (await client.conversations.items.list(conversation.id, { order: "asc" })).data[0]?.id ?? "";
    const afterDelete = await client.conversations.items.delete(userId, { conversation_id: conversation.id });
    expect(afterDelete.id).toBe(conversation.id);
    await expectStatus(
      client.conversations.items.retrieve(userId, { conversation_id: conversation.id }),
      404,
    );
    const left = await client.conversations.items.list(conversation.id);
    expect(left.data.map((i) => i.id)).toEqual([assistantId]);
    // Items added without a turn: listed, retrievable, referable, and the conversation goes on after them.
    const added = await client.conversations.items.create(conversation.id, {
      items: [
        { type: "message", role: "user", content: "remember: the code word is heron" },
        { type: "message", role: "assistant", content: "noted" },
      ],
    });
    expect(added.data.map((i) => (i.type === "message" ? i.role : i.type))).toEqual(["user", "assistant"]);
    const note = added.data[0]?.id ?? "";
    expect(
      await client.conversations.items.retrieve(note, { conversation_id: conversation.id }),
    ).toMatchObject({
      id: note,
      role: "user",
    });
    const listedAfterAdd = await client.conversations.items.list(conversation.id, { order: "asc" });
    expect(listedAfterAdd.data.map((i) => i.id)).toEqual([assistantId, ...added.data.map((i) => i.id)]);
    const referring = await client.responses.create({
      conversation: conversation.id,
      input: [
        { type: "item_reference", id: note },
        { role: "user", content: "what is the code word?" },
      ],
      ...SHORT,
    });
    expect(FINISHED).toContain(referring.status);
    // The conversation goes on after the tombstone.
    const next = await client.responses.create({ conversation: conversation.id, input: "again", ...SHORT });
    expect(FINISHED).toContain(next.status);
  });

  it("refuses bad input with the OpenAI envelope and stores nothing", async () => {
    const listed = (await listConversations()).length;
    const base = await client.responses.create({ input: "base", ...SHORT });
    const before = await itemCount(conversationOf(base.id));

    const unknownCall = await expectStatus(
      client.responses.create({
        previous_response_id: base.id,
        input: [
          { type: "function_call_output", call_id: "call_nope", output: "{}" },
          { role: "user", content: "x" },
        ],
      }),
      400,
    );
    expect(unknownCall.param).toBe("input[0].call_id");
    const unknownItem = await expectStatus(
      client.responses.create({
        previous_response_id: base.id,
        input: [
          { type: "item_reference", id: "msg_0123456789abcdefu" },
          { role: "user", content: "x" },
        ],
      }),
      404,
    );
    expect(unknownItem.code).toBe("item_not_found");
    const missing = `resp_turn_${"0".repeat(48)}`;
    const notFound = await expectStatus(
      client.responses.create({ input: "x", previous_response_id: missing }),
      404,
    );
    expect(notFound.param).toBe("previous_response_id");
    await expectStatus(client.responses.create({ input: "x", previous_response_id: "resp_nonsense" }), 404);
    await expectStatus(
      client.responses.create({ input: "x", conversation: "conv_1", previous_response_id: base.id }),
      400,
    );

    // Another tenant's response is not found, for chaining as for every read.
    const tenant = (await (
      await fetch(`${mesh.edge.url}/v1/admin/tenants`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "other" }),
      })
    ).json()) as { id: string };
    const key = (await (
      await fetch(`${mesh.edge.url}/v1/admin/tenants/${tenant.id}/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({}),
      })
    ).json()) as { key: string };
    const other = new OpenAI({ apiKey: key.key, baseURL: `${mesh.edge.url}/v1`, maxRetries: 0 });
    await expectStatus(other.responses.retrieve(base.id), 404);
    await expectStatus(other.responses.create({ input: "x", previous_response_id: base.id }), 404);

    expect(await itemCount(conversationOf(base.id))).toBe(before);
    expect((await listConversations()).length).toBe(listed);
  });
});
