import { describe, expect, it } from "vitest";
import { EngineFailureError, WIRE_VERSION, type GenerateRequestInput } from "../../schema/wire/v2/index.ts";
import type { GenerateStreamPart } from "../../workers/src/nats/generate-client.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { StartTurnResult } from "../../workers/src/conversation/conversation-rpc.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import type { TimelineEventOf } from "../../workers/src/db/timeline-event.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import {
  META,
  MemoryConversationStore,
  TIMINGS,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "./turn-loop-fixtures.ts";

function streamOf(result: StartTurnResult): ReadableStream<Uint8Array> {
  if (!result.ok) throw new Error(`refused: ${result.refusal.code}`);
  return result.stream;
}

/** A summary hop that answers only when the test says so. */
function heldSummaries() {
  const releases: Array<() => void> = [];
  let open = false;
  const releaseHeld = () => {
    for (const release of releases.splice(0)) release();
  };
  return {
    summary: (input: { turnId?: string | undefined }) =>
      new Promise<{ text: string }>((resolve) => {
        releases.push(() => {
          resolve({ text: `Summary of ${input.turnId ?? "?"}.` });
        });
        if (open) releaseHeld();
      }),
    /** Answers the summaries sent so far; later ones are held again. */
    releaseHeld,
    /** Answers every summary, those sent later too (a specialist's next one goes out once the last landed). */
    releaseAll: () => {
      open = true;
      releaseHeld();
    },
  };
}

/** Today's default harness under the `bounded` summary wait: a turn routed elsewhere waits for the summary. */
const BOUNDED_HARNESS: HarnessDocument = { ...DEFAULT_HARNESS, summaryWait: { mode: "bounded" } };

function conversation(
  script: Parameters<typeof createScriptedHops>[0],
  replyMs = 1_000,
  now = () => performance.now(),
  harness: HarnessDocument = DEFAULT_HARNESS,
) {
  const scripted = createScriptedHops(script);
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, {
    now,
    harness,
    hopTimeouts: { firstPartMs: 1_000, stallMs: 1_000, replyMs },
  });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const turn = (text: string) => collectParts(streamOf(turns.startTurn({ conversationId: META.id, text })));
  const types = () => store.events.map((e) => `${e.type}:${e.turnId}`);
  const routeOf = (turnId: string) =>
    store.events.find((e) => e.type === "route_decision" && e.turnId === turnId) as
      TimelineEventOf<"route_decision"> | undefined;
  return { scripted, store, turns, turn, types, routeOf };
}

describe("the next turn and the previous summary", () => {
  it("does not wait for the summary when routed to the specialist that answered the previous turn", async () => {
    const held = heldSummaries();
    const c = conversation({ summary: held.summary });
    await c.turn("first question");
    // The summary of turn 1 is still running, and turn 2 (routed to "coding" again) runs to its end meanwhile.
    const second = await c.turn("second question");
    expect(second.at(-1)?.type).toBe("turn-finish");
    expect(c.types()).toEqual([
      "user_message:turn_t1",
      "route_decision:turn_t1",
      "answer:turn_t1",
      "user_message:turn_t2",
      "route_decision:turn_t2",
      "answer:turn_t2",
    ]);
    expect(c.routeOf("turn_t2")?.summaryWaitMs).toBeUndefined();
    // The route hop saw the new user line, rendered as the user message then appended renders it.
    expect(c.scripted.calls.route[1]?.prompt).toContain("second question");
    held.releaseAll();
    await c.turns.afterTurns(() => Promise.resolve());
    expect(c.types().slice(6).sort()).toEqual(["summary:turn_t1", "summary:turn_t2"]);
  });

  it("sends a specialist's summaries one at a time, in turn order, each read when its turn ended", async () => {
    const held = heldSummaries();
    const c = conversation({ summary: held.summary });
    // A client that never pauses: three turns on one specialist while every summary is still running.
    await c.turn("first question");
    await c.turn("second question");
    await c.turn("third question");
    const sent = () => c.scripted.calls.summary.map((s) => s.turnId);
    // At the node they would share one KV slot, one at a time: past its queue bound they were refused.
    expect(sent()).toEqual(["turn_t1"]);
    for (const next of [
      ["turn_t1", "turn_t2"],
      ["turn_t1", "turn_t2", "turn_t3"],
    ]) {
      held.releaseHeld();
      await expect.poll(sent).toEqual(next);
    }
    held.releaseAll();
    await c.turns.afterTurns(() => Promise.resolve());
    expect(c.types().filter((t) => t.startsWith("summary"))).toEqual([
      "summary:turn_t1",
      "summary:turn_t2",
      "summary:turn_t3",
    ]);
    // Each prompt was its turn's, read before the next turn appended anything.
    expect(c.scripted.calls.summary[1]?.prompt).toContain("second question");
    expect(c.scripted.calls.summary[1]?.prompt).not.toContain("third question");
  });

  it("waits for that summary when routed to another specialist, so its view holds it (bounded)", async () => {
    const labels = ["coding", "chat"];
    const c = conversation(
      {
        route: () => Promise.resolve({ label: labels.shift() ?? "chat" }),
        summary: async (input) => {
          await new Promise((resolve) => setTimeout(resolve, 60));
          return { text: `Summary of ${input.turnId}.` };
        },
      },
      1_000,
      undefined,
      BOUNDED_HARNESS,
    );
    await c.turn("first question");
    await c.turn("second question");
    await c.turns.afterTurns(() => Promise.resolve());
    expect(c.types().slice(0, 5)).toEqual([
      "user_message:turn_t1",
      "route_decision:turn_t1",
      "answer:turn_t1",
      "summary:turn_t1",
      "user_message:turn_t2",
    ]);
    expect(c.routeOf("turn_t2")?.summaryWaitMs).toBeGreaterThan(20);
    expect(c.scripted.calls.answer[1]?.adapter).toBe("chat");
    expect(c.scripted.calls.answer[1]?.prompt).toContain("Summary of turn_t1.");
  });

  it("waits at most the summary's bound, and a late summary does not reach the new turn's view (bounded)", async () => {
    const labels = ["coding", "chat"];
    const held = heldSummaries();
    const c = conversation(
      { route: () => Promise.resolve({ label: labels.shift() ?? "chat" }), summary: held.summary },
      80,
      undefined,
      BOUNDED_HARNESS,
    );
    await c.turn("first question");
    const started = performance.now();
    const second = await c.turn("second question");
    expect(second.at(-1)?.type).toBe("turn-finish");
    expect(performance.now() - started).toBeLessThan(1_000);
    const waited = c.routeOf("turn_t2")?.summaryWaitMs ?? 0;
    expect(waited).toBeGreaterThanOrEqual(70);
    expect(waited).toBeLessThan(500);
    expect(c.scripted.calls.answer[1]?.prompt).not.toContain("Summary of turn_t1.");
    held.releaseAll();
    await c.turns.afterTurns(() => Promise.resolve());
    expect(c.types()).toContain("summary:turn_t1");
  });

  it("waits at most the harness's maxMs when it sets one (bounded)", async () => {
    const labels = ["coding", "chat"];
    const held = heldSummaries();
    const harness: HarnessDocument = { ...DEFAULT_HARNESS, summaryWait: { mode: "bounded", maxMs: 40 } };
    const c = conversation(
      { route: () => Promise.resolve({ label: labels.shift() ?? "chat" }), summary: held.summary },
      1_000,
      undefined,
      harness,
    );
    await c.turn("first question");
    await c.turn("second question");
    const waited = c.routeOf("turn_t2")?.summaryWaitMs ?? 0;
    expect(waited).toBeGreaterThanOrEqual(30);
    expect(waited).toBeLessThan(500);
    held.releaseAll();
    await c.turns.afterTurns(() => Promise.resolve());
  });

  it("does not wait by default: another specialist's view gets the answer's opening as an interim line", async () => {
    const labels = ["coding", "chat", "chat"];
    const held = heldSummaries();
    const c = conversation(
      { route: () => Promise.resolve({ label: labels.shift() ?? "chat" }), summary: held.summary },
      5_000,
    );
    await c.turn("first question");
    const started = performance.now();
    const second = await c.turn("second question");
    expect(second.at(-1)?.type).toBe("turn-finish");
    // The summary hop's bound is 5 s here: the turn did not wait for it.
    expect(performance.now() - started).toBeLessThan(1_000);
    const route = c.routeOf("turn_t2");
    expect(route?.summaryWaitMs).toBeUndefined();
    expect(route?.summaryInterim).toBe(true);
    const chatView = c.scripted.calls.answer[1]?.prompt ?? "";
    expect(chatView).toContain("[coding] (opening of the answer) Hello there.");
    expect(chatView.indexOf("(opening of the answer)")).toBeLessThan(chatView.indexOf("second question"));
    expect(chatView).not.toContain("Summary of turn_t1.");
    held.releaseAll();
    await c.turns.afterTurns(() => Promise.resolve());
    expect(c.types()).toContain("summary:turn_t1");
    // The late summary changed nothing in the views: turn 3's prompt extends turn 2's view.
    await c.turn("third question");
    const third = c.scripted.calls.answer[2]?.prompt ?? "";
    expect(third.startsWith(chatView)).toBe(true);
    expect(c.routeOf("turn_t3")?.summaryInterim).toBeUndefined();
  });
});

/** One node's answer stream: `start` from `nodeId`, the deltas, then `finish` — or a failure after the deltas. */
async function* nodeStream(
  nodeId: string,
  deltas: string[],
  end: "finish" | Error,
): AsyncGenerator<GenerateStreamPart> {
  let seq = 0;
  yield {
    version: WIRE_VERSION,
    seq: seq++,
    type: "start",
    requestId: "r",
    nodeId,
    adapter: "a",
    revision: "rev1",
  };
  for (const delta of deltas) yield { version: WIRE_VERSION, seq: seq++, type: "text-delta", delta };
  // The node goes away (or finishes) after the deltas went out, on a later tick, as over the network.
  await Promise.resolve();
  if (end instanceof Error) throw end;
  yield {
    version: WIRE_VERSION,
    seq,
    type: "finish",
    finishReason: "stop",
    text: deltas.join(""),
    usage: usage(120, 3),
    timings: TIMINGS,
  };
}

describe("mid-stream failover by continuation", () => {
  it("continues the answer on another node from the text streamed: one answer, the takeover recorded", async () => {
    const calls: GenerateRequestInput[] = [];
    const c = conversation({
      answer: (input) => {
        calls.push(input);
        return calls.length === 1
          ? nodeStream("node-a", ["Hello ", "the"], new EngineFailureError("node-a died"))
          : nodeStream("node-b", ["re, ", "friend."], "finish");
      },
    });
    const parts = await c.turn("hi");
    await c.turns.afterTurns(() => Promise.resolve());

    const deltas = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));
    expect(deltas.join("")).toBe("Hello there, friend.");
    expect(parts.map((p) => p.type).filter((t) => t !== "text-delta")).toEqual(["turn-start", "turn-finish"]);
    const finish = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-finish" }>;
    expect(finish.turn.answerText).toBe("Hello there, friend.");

    // The second node's prompt is the first's plus the partial answer, its budget what is left.
    const [first, second] = calls;
    expect(second?.prompt).toBe(`${first?.prompt ?? ""}Hello the`);
    expect(second?.sampling?.maxTokens).toBe((first?.sampling?.maxTokens ?? 0) - 2);

    const answer = c.store.events.find((e) => e.type === "answer") as TimelineEventOf<"answer">;
    expect(answer.text).toBe("Hello there, friend.");
    expect(answer.hop.nodeId).toBe("node-b");
    expect(answer.takeovers).toEqual([
      { fromNode: "node-a", toNode: "node-b", atChar: "Hello the".length, code: "engine_failure" },
    ]);
    expect(c.store.events.filter((e) => e.type === "answer")).toHaveLength(1);
    expect(c.store.events.some((e) => e.type === "turn_failed")).toBe(false);
  });

  it("records every takeover when two nodes die in turn", async () => {
    let call = 0;
    const c = conversation({
      answer: () => {
        call += 1;
        if (call === 1) return nodeStream("node-a", ["One, "], new EngineFailureError("a died"));
        if (call === 2) return nodeStream("node-b", ["two, "], new EngineFailureError("b died"));
        return nodeStream("node-c", ["three."], "finish");
      },
    });
    const parts = await c.turn("count");
    const finish = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-finish" }>;
    expect(finish.turn.answerText).toBe("One, two, three.");
    const answer = c.store.events.find((e) => e.type === "answer") as TimelineEventOf<"answer">;
    expect(answer.takeovers?.map((t) => [t.fromNode, t.toNode, t.atChar])).toEqual([
      ["node-a", "node-b", 5],
      ["node-b", "node-c", 10],
    ]);
  });

  it("does not continue an answer that ran out of its own time budget", async () => {
    let clock = 0;
    let calls = 0;
    const c = conversation(
      {
        answer: () => {
          calls += 1;
          return nodeStream(`node-${calls}`, ["Part"], new EngineFailureError("gone"));
        },
      },
      1_000,
      () => (clock += 60 * 60_000), // an hour per reading: every budget is spent
    );
    const parts = await c.turn("slow");
    expect(calls).toBe(1);
    expect(parts.at(-1)?.type).toBe("turn-error");
  });
});
