import { describe, expect, it, vi } from "vitest";
import { EngineFailureError, NoRespondersError } from "../../schema/wire/v2/index.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import { startStatelessTurn } from "../../workers/src/turns/turn-loop.ts";
import type { StartTurnResult } from "../../workers/src/conversation/conversation-rpc.ts";
import { readPartStream } from "../../workers/src/lib/create-part-stream.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import {
  META,
  MemoryConversationStore,
  answerParts,
  answerUntilAborted,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "./turn-loop-fixtures.ts";

type Scripted = ReturnType<typeof createScriptedHops>;

function storedConversation(scripted: Scripted) {
  const store = new MemoryConversationStore(META);
  const { deps, outbox, recorded } = createTestDeps(scripted.hops);
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const settled = () => turns.afterTurns(() => Promise.resolve());
  return { store, turns, recorded, settled };
}

function streamOf(result: StartTurnResult): ReadableStream<Uint8Array> {
  if (!result.ok) throw new Error(`refused: ${result.refusal.code}`);
  return result.stream;
}

const eventTypes = (store: MemoryConversationStore) => store.events.map((e) => e.type);

describe("the turn loop, stored turns", () => {
  it("runs user message → route → answer → summary in order, then emits and charges every hop", async () => {
    const scripted = createScriptedHops({});
    const { store, turns, recorded, settled } = storedConversation(scripted);
    const parts = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })));
    await settled();

    expect(parts.map((p) => p.type)).toEqual(["turn-start", "text-delta", "text-delta", "turn-finish"]);
    const finish = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-finish" }>;
    expect(finish.turn).toMatchObject({ status: "completed", answerText: "Hello there." });
    expect(finish.turn.mol).toMatchObject({ label: "coding", source: "router" });
    expect(eventTypes(store)).toEqual(["user_message", "route_decision", "answer", "summary"]);
    expect(recorded.events.map((e) => [e.phase, e.turn.mol.summary.status])).toEqual([
      ["turn", "pending"],
      ["summary", "ready"],
    ]);
    // Node figures: route 20 + 2, answer 100 + 5, summary 110 + 4.
    expect(recorded.charges).toEqual([
      {
        tenantId: META.tenantId,
        charge: {
          turnId: "turn_t1",
          tokens: 241,
          hops: { route: 22, answer: 105, summary: 114 },
          estimated: false,
        },
      },
    ]);
    // The stored record says the same: the API and the meter read one turn.
    expect(scripted.calls.answer[0]?.adapter).toBe("coding");
  });

  it("falls back to the harness default on a first turn whose route fails, and to the previous label after", async () => {
    const scripted = createScriptedHops({
      route: () => Promise.reject(new NoRespondersError("no router")),
    });
    const { store, turns, recorded, settled } = storedConversation(scripted);
    await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "one", forcedLabel: "agent" })),
    );
    await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "two" })));
    await settled();
    // A forced label never asks the router; the second turn's route failed on every node it tried.
    expect(scripted.calls.route).toHaveLength(3);
    const second = store.events.filter((e) => e.type === "route_decision").at(-1);
    expect(second).toMatchObject({
      label: "agent",
      source: "fallback",
      fallback: { code: "no_responders", to: "previous" },
    });

    const fresh = storedConversation(scripted);
    const [start] = await collectParts(
      streamOf(fresh.turns.startTurn({ conversationId: META.id, text: "hi" })),
    );
    expect(start?.type === "turn-start" && start.turn.mol).toMatchObject({
      label: "chat",
      source: "fallback",
      fallback: { to: "default" },
    });
    await fresh.settled();
    // A fallback route ran on no node: only the answer and summary are charged.
    expect(fresh.recorded.charges[0]?.charge.hops).toEqual({ route: 0, answer: 105, summary: 114 });
    expect(recorded.charges).toHaveLength(2);
  });

  it("answers a forced label without the route hop", async () => {
    const scripted = createScriptedHops({});
    const { store, turns, recorded, settled } = storedConversation(scripted);
    const parts = await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "hi", forcedLabel: "genui" })),
    );
    await settled();
    expect(scripted.calls.route).toHaveLength(0);
    expect(scripted.calls.answer[0]?.adapter).toBe("genui");
    expect(store.events[0]).toMatchObject({ type: "user_message", forcedLabel: "genui" });
    expect(parts.at(-1)?.type === "turn-finish" && parts.at(-1)).toMatchObject({
      turn: { mol: { source: "forced" } },
    });
    expect(recorded.charges[0]?.charge.hops.route).toBe(0);
  });

  it("fails the turn when every node fails the answer before any text, and charges only the route", async () => {
    const scripted = createScriptedHops({
      // eslint-disable-next-line @typescript-eslint/require-await -- a stream that fails on its first read
      answer: async function* () {
        yield* [];
        throw new EngineFailureError("GPU fell over");
      },
    });
    const { store, turns, recorded, settled } = storedConversation(scripted);
    const parts = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })));
    await settled();
    expect(scripted.calls.answer).toHaveLength(3);
    expect(parts.map((p) => p.type)).toEqual(["turn-start", "turn-error"]);
    expect(parts[1]).toMatchObject({ error: { code: "engine_failure" }, turn: { status: "failed" } });
    expect(eventTypes(store)).toEqual(["user_message", "route_decision", "turn_failed"]);
    expect(scripted.calls.summary).toHaveLength(0);
    expect(recorded.events.map((e) => [e.phase, e.turn.status])).toEqual([["turn", "failed"]]);
    expect(recorded.charges.map((c) => c.charge)).toEqual([
      { turnId: "turn_t1", tokens: 22, hops: { route: 22, answer: 0, summary: 0 }, estimated: false },
    ]);
  });

  it("charges an estimate of the prompt and the streamed text when the node dies mid-answer", async () => {
    const scripted = createScriptedHops({
      answer: async function* (input) {
        const parts = answerParts("twelve chars", usage(1, 1));
        for await (const part of parts) {
          if (part.type === "finish") throw new EngineFailureError(`lost mid-answer of ${input.turnId}`);
          yield part;
        }
      },
    });
    const { turns, recorded, settled } = storedConversation(scripted);
    const parts = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })));
    await settled();
    // Text had streamed: each next node continues from it, and when every node dies the turn fails.
    expect(scripted.calls.answer).toHaveLength(3);
    expect(parts.at(-1)?.type).toBe("turn-error");
    const promptChars = scripted.calls.answer[0]?.prompt.length ?? 0;
    const charge = recorded.charges[0]?.charge;
    expect(charge?.estimated).toBe(true);
    expect(charge?.hops.answer).toBe(Math.ceil(promptChars / 4) + Math.ceil((3 * "twelve chars".length) / 4));
    expect(charge?.tokens).toBe(22 + (charge?.hops.answer ?? 0));
  });

  it("records a cancellation mid-stream, skips the summary and charges the partial answer", async () => {
    const scripted = createScriptedHops({
      answer: (_input, options) => answerUntilAborted("partial ", options),
    });
    const { store, turns, recorded, settled } = storedConversation(scripted);
    const seen: TurnStreamPart["type"][] = [];
    for await (const part of readPartStream<TurnStreamPart>(
      streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })),
    )) {
      seen.push(part.type);
      if (part.type === "text-delta") break; // the client goes away
    }
    await settled();
    expect(seen).toEqual(["turn-start", "text-delta"]);
    expect(store.events.at(-1)).toMatchObject({
      type: "turn_cancelled",
      reason: "client disconnected",
      partialChars: 8,
    });
    expect(scripted.calls.summary).toHaveLength(0);
    expect(recorded.events.map((e) => [e.phase, e.turn.status])).toEqual([["turn", "cancelled"]]);
    const promptChars = scripted.calls.answer[0]?.prompt.length ?? 0;
    expect(recorded.charges[0]?.charge).toMatchObject({
      estimated: true,
      hops: { route: 22, answer: Math.ceil(promptChars / 4) + 2, summary: 0 },
    });
  });

  it("records a failed summary without failing the turn, and still charges route and answer", async () => {
    const scripted = createScriptedHops({
      summary: () => Promise.reject(new EngineFailureError("summary node gone")),
    });
    const { store, turns, recorded, settled } = storedConversation(scripted);
    const parts = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })));
    await settled();
    expect(parts.at(-1)?.type).toBe("turn-finish");
    expect(scripted.calls.summary).toHaveLength(3);
    expect(store.events.at(-1)).toMatchObject({ type: "summary_failed", code: "engine_failure" });
    expect(recorded.events.map((e) => [e.phase, e.turn.mol.summary.status])).toEqual([
      ["turn", "pending"],
      ["summary", "failed"],
    ]);
    expect(recorded.charges[0]?.charge).toMatchObject({
      tokens: 127,
      hops: { summary: 0 },
      estimated: false,
    });
  });

  it("replays a finished turn for a repeated Idempotency-Key, without hops or charge; 422 and 409 otherwise", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let holdNext = false;
    const scripted = createScriptedHops({
      answer: async function* () {
        if (holdNext) await held;
        yield* answerParts("Hello there.", usage(100, 5));
      },
    });
    const { turns, recorded, settled } = storedConversation(scripted);
    const idempotency = { key: "key-1", requestHash: "h1" };
    const first = await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "hi", idempotency })),
    );
    await settled();

    const replay = await collectParts(
      streamOf(turns.startTurn({ conversationId: META.id, text: "hi", idempotency })),
    );
    expect(replay.map((p) => p.type)).toEqual(["turn-start", "text-delta", "turn-finish"]);
    // The replay is the stored turn, summary included by now.
    expect(replay.at(-1)).toMatchObject({
      type: "turn-finish",
      turn: { turnId: "turn_t1", answerText: "Hello there.", mol: { summary: { status: "ready" } } },
    });
    expect(first.at(-1)).toMatchObject({ turn: { turnId: "turn_t1" } });
    expect(scripted.calls.answer).toHaveLength(1);
    await settled();
    expect(recorded.charges).toHaveLength(1);

    const mismatch = turns.startTurn({
      conversationId: META.id,
      text: "other",
      idempotency: { key: "key-1", requestHash: "h2" },
    });
    expect(mismatch).toMatchObject({ ok: false, refusal: { status: 422, code: "idempotency_key_reused" } });

    holdNext = true;
    const running = turns.startTurn({
      conversationId: META.id,
      text: "slow",
      idempotency: { key: "key-2", requestHash: "h" },
    });
    await vi.waitFor(() => expect(scripted.calls.answer).toHaveLength(2));
    const again = turns.startTurn({
      conversationId: META.id,
      text: "slow",
      idempotency: { key: "key-2", requestHash: "h" },
    });
    expect(again).toMatchObject({ ok: false, refusal: { status: 409, code: "idempotency_key_in_flight" } });
    release();
    expect((await collectParts(streamOf(running))).at(-1)?.type).toBe("turn-finish");
  });

  it("refuses a turn of a conversation that does not exist, storing nothing", () => {
    const store = new MemoryConversationStore();
    const { deps, outbox } = createTestDeps(createScriptedHops({}).hops);
    const turns = new ConversationTurns({ ...deps, store, outbox });
    const result = turns.startTurn({
      conversationId: "conv_x",
      text: "hi",
      idempotency: { key: "k", requestHash: "h" },
    });
    expect(result).toMatchObject({ ok: false, refusal: { status: 404 } });
    expect(store.events).toHaveLength(0);
    expect(store.idempotency.size).toBe(0);
  });

  it("finishes the turn when the meter or the outbox fails", async () => {
    const scripted = createScriptedHops({});
    const store = new MemoryConversationStore(META);
    const { deps } = createTestDeps(scripted.hops, {
      meter: { record: async () => Promise.reject(new Error("limiter down")) },
    });
    const turns = new ConversationTurns({
      ...deps,
      store,
      outbox: { emit: async () => Promise.reject(new Error("D1 down")) },
    });
    const parts = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "hi" })));
    await turns.afterTurns(() => Promise.resolve());
    expect(parts.at(-1)?.type).toBe("turn-finish");
    expect(store.events.at(-1)?.type).toBe("summary");
  });
  it("reports a storage failure before the answer as an engine failure, and one after it only once", async () => {
    const failOn = (type: string) => {
      const store = new MemoryConversationStore(META);
      const append = store.append.bind(store);
      store.append = (events) => {
        if (events.some((e) => e.type === type)) throw new Error(`disk full at ${type}`);
        return append(events);
      };
      const { deps, outbox, recorded } = createTestDeps(createScriptedHops({}).hops);
      return { turns: new ConversationTurns({ ...deps, store, outbox }), recorded };
    };
    const early = failOn("route_decision");
    const parts = await collectParts(
      streamOf(early.turns.startTurn({ conversationId: META.id, text: "hi" })),
    );
    expect(parts).toMatchObject([{ type: "turn-error", error: { code: "engine_failure" } }]);

    const late = failOn("summary");
    const finished = await collectParts(
      streamOf(late.turns.startTurn({ conversationId: META.id, text: "hi" })),
    );
    await late.turns.afterTurns(() => Promise.resolve());
    expect(finished.at(-1)?.type).toBe("turn-finish");
    expect(late.recorded.events.map((e) => e.phase)).toEqual(["turn"]);
    expect(late.recorded.charges[0]?.charge.tokens).toBe(127);
  });
});

describe("the turn loop, stateless turns (chat completions)", () => {
  const request = {
    tenantId: "tenant_chat",
    conversationKey: "chat_abc",
    messages: [
      { role: "system" as const, content: "Be brief." },
      { role: "user" as const, content: "hi" },
    ],
  };

  it("charges the request's tenant for route and answer, with no summary and nothing stored", async () => {
    const scripted = createScriptedHops({});
    const { deps, recorded } = createTestDeps(scripted.hops);
    const parts = await collectParts(streamOf(startStatelessTurn(deps, request)));
    expect(parts.at(-1)).toMatchObject({
      type: "turn-finish",
      turn: { conversationId: "chat_abc", userText: "hi" },
    });
    expect(scripted.calls.answer[0]?.slotKey).toBe("chat_abc");
    await vi.waitFor(() => expect(recorded.charges).toHaveLength(1));
    expect(recorded.charges[0]).toEqual({
      tenantId: "tenant_chat",
      charge: {
        turnId: "turn_t1",
        tokens: 127,
        hops: { route: 22, answer: 105, summary: 0 },
        estimated: false,
      },
    });
    expect(scripted.calls.summary).toHaveLength(0);
    expect(recorded.events).toHaveLength(0);
  });

  it("charges a forced-label turn's answer", async () => {
    const scripted = createScriptedHops({});
    const { deps, recorded } = createTestDeps(scripted.hops);
    await collectParts(streamOf(startStatelessTurn(deps, { ...request, forcedLabel: "chat" })));
    await vi.waitFor(() => expect(recorded.charges).toHaveLength(1));
    expect(recorded.charges[0]?.charge).toMatchObject({ tokens: 105, hops: { route: 0, answer: 105 } });
  });

  it("charges an abandoned stream for what it generated", async () => {
    const scripted = createScriptedHops({
      answer: (_input, options) => answerUntilAborted("some text", options),
    });
    const { deps, recorded } = createTestDeps(scripted.hops);
    for await (const part of readPartStream<TurnStreamPart>(streamOf(startStatelessTurn(deps, request)))) {
      if (part.type === "text-delta") break;
    }
    await vi.waitFor(() => expect(recorded.charges).toHaveLength(1));
    const promptChars = scripted.calls.answer[0]?.prompt.length ?? 0;
    expect(recorded.charges[0]?.charge).toMatchObject({
      estimated: true,
      hops: { route: 22, answer: Math.ceil(promptChars / 4) + Math.ceil("some text".length / 4) },
    });
  });

  it("reports an answer failure and charges the route it ran", async () => {
    const scripted = createScriptedHops({
      // eslint-disable-next-line @typescript-eslint/require-await -- a stream that fails on its first read
      answer: async function* () {
        yield* [];
        throw new EngineFailureError("down");
      },
    });
    const { deps, recorded } = createTestDeps(scripted.hops);
    const parts = await collectParts(streamOf(startStatelessTurn(deps, request)));
    expect(parts.map((p) => p.type)).toEqual(["turn-start", "turn-error"]);
    await vi.waitFor(() => expect(recorded.charges).toHaveLength(1));
    expect(recorded.charges[0]?.charge.tokens).toBe(22);
  });
});
