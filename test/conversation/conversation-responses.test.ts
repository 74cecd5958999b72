import { describe, expect, it } from "vitest";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { StartTurnResult } from "../../workers/src/conversation/conversation-rpc.ts";
import { buildTurnId, parseResponseId } from "../../workers/src/conversation/item-id.ts";
import { listItems } from "../../workers/src/conversation/list-items.ts";
import {
  addItems,
  deleteItem,
  deleteResponse,
  exportThrough,
  readStoredTurn,
} from "../../workers/src/conversation/stored-turns.ts";
import { CANCELLED_BY_REQUEST } from "../../workers/src/turns/turn-loop.ts";
import {
  META,
  MemoryConversationStore,
  answerUntilAborted,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "./turn-loop-fixtures.ts";

type Scripted = ReturnType<typeof createScriptedHops>;

function storedConversation(scripted: Scripted = createScriptedHops({})) {
  const store = new MemoryConversationStore(META);
  const { deps, outbox, recorded } = createTestDeps(scripted.hops);
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const settled = () => turns.afterTurns(() => Promise.resolve(undefined));
  return { store, turns, recorded, settled, scripted };
}

function streamOf(result: StartTurnResult): ReadableStream<Uint8Array> {
  if (!result.ok) throw new Error(`refused: ${result.refusal.code}`);
  return result.stream;
}

const refusalOf = (result: StartTurnResult) => (result.ok ? undefined : result.refusal);
const eventTypes = (store: MemoryConversationStore) => store.events.map((e) => e.type);

describe("response ids", () => {
  it("name their conversation, so a response leads to its object without an index", () => {
    const conversationId = `conv_${"ab".repeat(16)}`;
    const turnId = buildTurnId(conversationId, "0123456789abcdef0123456789abcdef");
    expect(turnId).toBe(`turn_${"ab".repeat(16)}0123456789abcdef`);
    expect(parseResponseId(`resp_${turnId}`)).toEqual({ conversationId, turnId });
    expect(parseResponseId("resp_turn_01")).toBeUndefined();
    expect(parseResponseId(`resp_turn_${"0".repeat(47)}`)).toBeUndefined();
    // Stateless keys are not conversations: their ids never parse as stored responses.
    expect(parseResponseId(`resp_${buildTurnId("chat_1", "f".repeat(32))}`)).toBeUndefined();
  });
});

describe("stored turns: chaining, instructions, context, tombstones", () => {
  it("continues from the latest turn and refuses an older one as not the latest (the caller forks)", async () => {
    const { store, turns, settled } = storedConversation();
    await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "one" })));
    await settled();
    await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "two", previousTurnId: "turn_t1" })),
    );
    await settled();
    expect(
      refusalOf(turns.startTurn({ conversationId: META.id, text: "x", previousTurnId: "turn_t1" })),
    ).toMatchObject({ status: 409, code: "previous_response_not_latest" });
    expect(
      refusalOf(turns.startTurn({ conversationId: META.id, text: "x", previousTurnId: "turn_nope" })),
    ).toMatchObject({ status: 404, code: "previous_response_not_found" });
    // Refusals store nothing.
    expect(eventTypes(store).filter((t) => t === "user_message")).toHaveLength(2);

    // A fork starts from a copy through the older turn, summary included.
    const seed = exportThrough(store, "turn_t1") ?? [];
    expect(seed.map((e) => e.type)).toEqual(["user_message", "route_decision", "answer", "summary"]);
  });

  it("claims the latest turn at once: two chains from one response cannot both continue it", async () => {
    const { turns, settled } = storedConversation();
    await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "one" })));
    await settled();
    const a = turns.startTurn({ conversationId: META.id, text: "a", previousTurnId: "turn_t1" });
    expect(a.ok).toBe(true);
    // turn_t2 has not appended its user message yet, and is already the latest: the second chain forks.
    const b = turns.startTurn({ conversationId: META.id, text: "b", previousTurnId: "turn_t1" });
    expect(refusalOf(b)).toMatchObject({ status: 409, code: "previous_response_not_latest" });
    await settled();
  });

  it("appends instructions only when they change, and context messages before the user message", async () => {
    const { store, turns, settled, scripted } = storedConversation();
    const ask = (text: string, extra: object = {}) =>
      collectParts(streamOf(turns.startTurn({ conversationId: META.id, text, ...extra })));
    await ask("one", {
      instructions: "Be brief.",
      context: [
        { role: "user", text: "earlier question" },
        { role: "assistant", text: "earlier answer" },
      ],
    });
    await settled();
    await ask("two", { instructions: "Be brief." });
    await settled();
    await ask("three", { instructions: "Be thorough." });
    await settled();
    expect(
      eventTypes(store).filter((t) => t !== "route_decision" && t !== "answer" && t !== "summary"),
    ).toEqual([
      "instructions",
      "context_messages",
      "user_message",
      "user_message",
      "instructions",
      "user_message",
    ]);
    // The views: each prompt extends the previous one (prefix kept), with the instructions and context in it.
    const prompts = scripted.calls.answer.map((call) => call.prompt);
    expect(prompts[0]).toContain("Be brief.");
    expect(prompts[0]).toContain("earlier question");
    expect(prompts[0]).toContain("earlier answer");
    expect(prompts[1]?.startsWith(prompts[0] ?? "\0")).toBe(true);
    // A change of instructions appends a system line: the prefix stays.
    expect(prompts[2]?.startsWith(prompts[1] ?? "\0")).toBe(true);
    expect(prompts[2]).toContain("Be thorough.");
    expect(prompts[2]?.indexOf("Be brief.")).toBe(prompts[0]?.indexOf("Be brief."));
    const stored = readStoredTurn(store, META.id, "turn_t1");
    expect(stored).toMatchObject({ instructions: "Be brief.", deleted: false });
    expect(stored?.context).toHaveLength(2);
  });

  it("hides deleted responses and items, keeps the views as they were", async () => {
    const { store, turns, settled, scripted } = storedConversation();
    await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "one" })));
    await settled();
    expect(deleteResponse(store, "turn_t1")).toBe(true);
    expect(deleteResponse(store, "turn_t1")).toBe(false);
    expect(readStoredTurn(store, META.id, "turn_t1")?.deleted).toBe(true);
    expect(
      refusalOf(turns.startTurn({ conversationId: META.id, text: "x", previousTurnId: "turn_t1" })),
    ).toMatchObject({ status: 404 });
    expect(deleteItem(store, META.id, "msg_t1u")).toBe(true);
    expect(deleteItem(store, META.id, "msg_t1u")).toBe(false);
    const page = listItems(store, META.id, { limit: 10, order: "asc" });
    expect("items" in page && page.items.map((i) => i.role)).toEqual(["assistant"]);

    await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "two" })));
    await settled();
    const [first, second] = scripted.calls.answer.map((call) => call.prompt);
    // Tombstones never rewrite the middle of a view: the second prompt still starts with the first.
    expect(second?.startsWith(first ?? "\0")).toBe(true);
  });

  it("adds items without a turn: listed, retrievable, deletable, and opening the next turn's views", async () => {
    const { store, turns, settled, scripted } = storedConversation();
    await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "one" })));
    await settled();
    const added = addItems(store, "turn_added1", [
      { role: "user", text: "a note from the user" },
      { role: "assistant", text: "an answer given elsewhere" },
    ]);
    const ids = added.map((item) => ("context" in item ? item.context.id : ""));
    expect(ids).toEqual(["msg_added1c0", "msg_added1c1"]);
    const page = listItems(store, META.id, { limit: 10, order: "asc" });
    const listed = "items" in page ? page.items.map((i) => ("context" in i ? i.context.id : i.role)) : [];
    expect(listed).toEqual(["user", "assistant", "msg_added1c0", "msg_added1c1"]);
    // Paging through a context event's items keeps their order on both sides of the cursor.
    const after = listItems(store, META.id, { limit: 10, order: "asc", after: "msg_added1c0" });
    expect("items" in after && after.items.map((i) => ("context" in i ? i.context.id : i.role))).toEqual([
      "msg_added1c1",
    ]);
    const before = listItems(store, META.id, { limit: 10, order: "desc", after: "msg_added1c1" });
    expect("items" in before && before.items.map((i) => ("context" in i ? i.context.id : i.role))).toEqual([
      "msg_added1c0",
      "assistant",
      "user",
    ]);
    expect(turns.startTurn({ conversationId: META.id, text: "x", itemReferences: ["msg_added1c1"] }).ok).toBe(
      true,
    );
    await settled();
    const second = scripted.calls.answer[1]?.prompt ?? "";
    expect(second).toContain("a note from the user");
    expect(second.startsWith(scripted.calls.answer[0]?.prompt ?? "\0")).toBe(true);
    expect(deleteItem(store, META.id, "msg_added1c0")).toBe(true);
    const left = listItems(store, META.id, { limit: 10, order: "asc" });
    expect("items" in left && left.items.some((i) => "context" in i && i.context.id === "msg_added1c0")).toBe(
      false,
    );
  });

  it("refuses an unknown item reference before anything is stored", () => {
    const { store, turns } = storedConversation();
    const result = turns.startTurn({ conversationId: META.id, text: "x", itemReferences: ["msg_nou"] });
    expect(refusalOf(result)).toMatchObject({ status: 404, code: "item_not_found" });
    expect(store.events).toHaveLength(0);
  });
});

describe("detached turns, cancel and resume", () => {
  it("cancels a background turn by request, and attached readers see the cancel", async () => {
    const scripted = createScriptedHops({ answer: (_input, options) => answerUntilAborted("Hel", options) });
    const { store, turns, settled } = storedConversation(scripted);
    const started = turns.startDetachedTurn({ conversationId: META.id, text: "hi" });
    if (!started.ok) throw new Error("refused");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const attached = turns.attach(started.turnId);
    expect(turns.cancel(started.turnId)).toBe(true);
    await turns.settled(started.turnId);
    await settled();
    const cancelled = store.events.find((e) => e.type === "turn_cancelled");
    expect(cancelled).toMatchObject({ reason: CANCELLED_BY_REQUEST, partialChars: 3 });
    const parts = attached?.ok ? await collectParts(attached.stream) : [];
    expect(parts.map((p) => p.type)).toEqual(["turn-start", "text-delta", "turn-error"]);
    expect(turns.cancel(started.turnId)).toBe(false);
  });

  it("replays a finished turn's parts for a late reader", async () => {
    const { turns, settled } = storedConversation();
    const live = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })));
    await settled();
    const attached = turns.attach("turn_t1");
    const again = attached?.ok ? await collectParts(attached.stream) : [];
    // The same parts in the same order: an encoder numbers them the same, so `starting_after` lines up.
    expect(again).toEqual(live);
    expect(turns.attach("turn_unknown")).toBeUndefined();
  });

  it("runs a retry anew after the client's stream dropped, and replays it after that", async () => {
    let calls = 0;
    const scripted = createScriptedHops({
      answer: (input, options) => {
        calls += 1;
        return calls === 1
          ? answerUntilAborted("Hel", options)
          : createScriptedHops({}).hops.stream(input, options);
      },
    });
    const { store, turns, settled } = storedConversation(scripted);
    const idempotency = { key: "k1", requestHash: "h1" };
    const first = streamOf(turns.startTurn({ conversationId: META.id, text: "hi", idempotency }));
    const reader = first.getReader();
    await reader.read();
    await reader.cancel();
    await settled();
    expect(store.events.find((e) => e.type === "turn_cancelled")).toBeDefined();

    const retry = await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "hi", idempotency })),
    );
    await settled();
    expect(retry.at(-1)).toMatchObject({
      type: "turn-finish",
      turn: { turnId: "turn_t2", status: "completed" },
    });
    const replay = await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "hi", idempotency })),
    );
    expect(replay.at(-1)).toMatchObject({ type: "turn-finish", turn: { turnId: "turn_t2" } });
    expect(calls).toBe(2);
  });
});
