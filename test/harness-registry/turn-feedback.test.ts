import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { createApp } from "../../workers/src/app/create-app.ts";
import { ConversationCore } from "../../workers/src/core/conversation-core.ts";
import type {
  TurnFeedback,
  TurnOutcome,
  TurnOutcomeRecorder,
} from "../../workers/src/harness-registry/guard-rollout.ts";
import {
  META,
  MemoryConversationStore,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "../conversation/turn-loop-fixtures.ts";
import { createMemoryAppDeps } from "../tenancy/create-memory-app-deps.ts";

/**
 * A user's feedback on a stored turn, through the conversation's core: appended to the timeline (the views never
 * see it), shown as the turn's `mol.feedback`, and negative feedback reported to the rollout guard with the
 * version and label arm the turn ran.
 */

const CANARY = "sha256:" + "c".repeat(64);

function setUp(counts = true) {
  const reports = { outcomes: [] as TurnOutcome[], feedback: [] as TurnFeedback[] };
  const rollout: TurnOutcomeRecorder = {
    record: (outcome) => {
      reports.outcomes.push(outcome);
      return Promise.resolve();
    },
    recordFeedback: (feedback) => {
      reports.feedback.push(feedback);
      return Promise.resolve(counts);
    },
  };
  const scripted = createScriptedHops({});
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, {
    rollout,
    chooseHarness: () =>
      Promise.resolve({
        harness: DEFAULT_HARNESS,
        harnessHash: CANARY,
        choice: { label: "production", arm: "canary", source: "label" },
      }),
  });
  const core = new ConversationCore({
    store: Object.assign(store, { migrate: () => Promise.resolve() }),
    outbox,
    loop: deps,
  });
  const run = async (text: string): Promise<string> => {
    const turnId = core.newTurnId(META.id);
    const result = core.startTurn({ conversationId: META.id, text }, turnId);
    if (!result.ok) throw new Error(result.refusal.message);
    await collectParts(result.stream);
    return turnId;
  };
  return { core, store, scripted, reports, run };
}

describe("feedback on a stored turn", () => {
  it("is appended, shown as mol.feedback, and reported to the guard when negative", async () => {
    const { core, store, reports, run } = setUp();
    const turnId = await run("Hello?");
    const result = await core.recordFeedback(turnId, { rating: "negative", comment: "wrong" });
    expect(result).toMatchObject({ ok: true, counted: true });
    if (!result.ok) return;
    expect(result.turn.mol.feedback).toEqual({
      rating: "negative",
      comment: "wrong",
      createdAt: expect.any(Number) as number,
    });
    // The guard had the turn itself first (its loop finished before the feedback was taken).
    expect(reports.outcomes.map((o) => o.turnId)).toEqual([turnId]);
    expect(reports.feedback).toEqual([
      {
        tenantId: META.tenantId,
        turnId,
        harnessHash: CANARY,
        choice: { label: "production", arm: "canary", source: "label" },
      },
    ]);
    expect(store.events.filter((e) => e.type === "feedback")).toHaveLength(1);
  });

  it("keeps every feedback in the timeline and shows the latest; positive feedback is not reported", async () => {
    const { core, store, reports, run } = setUp();
    const turnId = await run("Hello?");
    await core.recordFeedback(turnId, { rating: "negative" });
    const second = await core.recordFeedback(turnId, { rating: "positive" });
    expect(second).toMatchObject({
      ok: true,
      counted: false,
      turn: { mol: { feedback: { rating: "positive" } } },
    });
    expect(store.events.flatMap((e) => (e.type === "feedback" ? [e.rating] : []))).toEqual([
      "negative",
      "positive",
    ]);
    expect(reports.feedback).toHaveLength(1);
    const read = await core.readTurn(turnId);
    expect(read?.turn.mol.feedback?.rating).toBe("positive");
  });

  it("says whether the guard counted it", async () => {
    const { core, run } = setUp(false);
    const turnId = await run("Hello?");
    expect(await core.recordFeedback(turnId, { rating: "negative" })).toMatchObject({
      ok: true,
      counted: false,
    });
  });

  it("refuses an unknown or deleted turn and a malformed body, storing nothing", async () => {
    const { core, store, reports, run } = setUp();
    const turnId = await run("Hello?");
    // Taken once the turn's loop has finished (its summary stored): nothing else lands after it.
    await core.recordFeedback(turnId, { rating: "positive" });
    const before = store.events.length;
    expect(await core.recordFeedback("turn_unknown", { rating: "negative" })).toEqual({
      ok: false,
      error: "not_found",
    });
    await expect(
      core.recordFeedback(turnId, { rating: "meh" } as unknown as { rating: "negative" }),
    ).rejects.toThrow();
    expect(store.events.length).toBe(before);
    await core.deleteResponse(turnId);
    const deleted = store.events.length;
    expect(await core.recordFeedback(turnId, { rating: "negative" })).toEqual({
      ok: false,
      error: "not_found",
    });
    expect(store.events.length).toBe(deleted);
    expect(reports.feedback).toHaveLength(0);
  });

  it("never reaches a specialist's view", async () => {
    const { core, scripted, run } = setUp();
    const first = await run("Hello?");
    await core.recordFeedback(first, { rating: "negative", comment: "a comment no view shows" });
    await run("And now?");
    const prompts = [...scripted.calls.route, ...scripted.calls.answer].map((call) => call.prompt);
    expect(prompts.some((prompt) => prompt.includes("And now?"))).toBe(true);
    expect(prompts.some((prompt) => prompt.includes("a comment no view shows"))).toBe(false);
  });
});

describe("POST /v1/responses/{id}/feedback refuses bad input before the conversation", () => {
  // Conversations are `unused` here: every request must be answered before one is asked. The writes bucket
  // admits each, and has it back when the request is refused.
  const refunds: number[] = [];
  const unusedLimit = (): never => {
    throw new Error("not used here");
  };
  const { deps } = createMemoryAppDeps("sk-dev", {
    telemetry: { debug: false, write: () => undefined },
    limits: () => ({
      admit: unusedLimit,
      admitWrite: () => Promise.resolve({ ok: true, headers: {} } as never),
      refundWrite: () => {
        refunds.push(1);
        return Promise.resolve();
      },
      refund: unusedLimit,
      record: unusedLimit,
      readLimits: unusedLimit,
      setLimits: unusedLimit,
    }),
  });
  const app = createApp(() => deps);
  const send = (id: string, body: string) =>
    app.request(`/v1/responses/${id}/feedback`, {
      method: "POST",
      headers: { authorization: "Bearer sk-dev", "content-type": "application/json" },
      body,
    });
  const RESPONSE = "resp_conv0123_turn0123";

  it.each([
    ["a rating outside the two", { rating: "meh" }, "rating"],
    ["no rating", { comment: "x" }, "rating"],
    ["an unknown field", { rating: "negative", score: 1 }, "score"],
    ["a comment over 2048 characters", { rating: "negative", comment: "x".repeat(2049) }, "comment"],
  ])("%s: 400", async (_name, body, param) => {
    const response = await send(RESPONSE, JSON.stringify(body));
    const text = await response.text();
    expect(response.status, text).toBe(400);
    expect((JSON.parse(text) as { error: { param: string | null } }).error.param).toBe(param);
  });

  it("malformed JSON: 400; an id that names no response: 404; each write given back", async () => {
    refunds.length = 0;
    expect((await send(RESPONSE, "{")).status).toBe(400);
    expect((await send("resp_nope", JSON.stringify({ rating: "negative" }))).status).toBe(404);
    expect(refunds).toHaveLength(2);
  });
});
