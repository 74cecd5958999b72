import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { EngineFailureError } from "../../schema/wire/v2/index.ts";
import type { TurnUsage } from "../../workers/src/conversation/charge-turn.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { StartTurnRequest } from "../../workers/src/conversation/conversation-rpc.ts";
import {
  META,
  MemoryConversationStore,
  answerParts,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "./turn-loop-fixtures.ts";

/** A stored conversation whose turns report usage to a recorder that keeps what it got. */
function conversationWithRecorder(scripted: ReturnType<typeof createScriptedHops>) {
  const recordedUsage: TurnUsage[] = [];
  const { deps, outbox } = createTestDeps(scripted.hops, {
    usage: {
      record(turn) {
        recordedUsage.push(turn);
        return Promise.resolve();
      },
    },
  });
  const turns = new ConversationTurns({ ...deps, store: new MemoryConversationStore(META), outbox });
  const run = async (request: Omit<StartTurnRequest, "conversationId">) => {
    const result = turns.startTurn({ conversationId: META.id, ...request });
    if (!result.ok) throw new Error(result.refusal.code);
    await collectParts(result.stream);
    await turns.afterTurns(() => Promise.resolve());
  };
  return { run, recordedUsage };
}

describe("usage by key and end user, from the turn loop", () => {
  it("reports each hop on its adapter under the turn's key, end user and UTC day, once per turn", async () => {
    const { run, recordedUsage } = conversationWithRecorder(createScriptedHops({}));
    await run({ text: "hi", attribution: { keyId: "key_1", endUser: "alice" } });
    await run({ text: "again", attribution: { keyId: "key_2" } });
    expect(recordedUsage).toHaveLength(2);
    // The day the turn started: the memory store stamps every event at 1 ms, so 1970-01-01 UTC.
    expect(recordedUsage[0]).toEqual({
      tenantId: META.tenantId,
      turnId: "turn_t1",
      keyId: "key_1",
      endUser: "alice",
      day: "1970-01-01",
      hops: [
        { hop: "route", adapter: DEFAULT_HARNESS.router.adapter, ...tokens(20, 2), estimated: false },
        { hop: "answer", adapter: "coding", ...tokens(100, 5), estimated: false },
        { hop: "summary", adapter: "coding", ...tokens(110, 4), estimated: false },
      ],
    });
    expect(recordedUsage[1]).toMatchObject({ turnId: "turn_t2", keyId: "key_2", endUser: "" });
  });

  it("reports a lost answer's estimate, the same the meter charges", async () => {
    const { run, recordedUsage } = conversationWithRecorder(
      createScriptedHops({
        answer: async function* () {
          for await (const part of answerParts("twelve chars", usage(1, 1))) {
            if (part.type === "finish") throw new EngineFailureError("lost mid-answer");
            yield part;
          }
        },
      }),
    );
    await run({ text: "hi", attribution: { keyId: "key_1" } });
    const answer = recordedUsage[0]?.hops.find((hop) => hop.hop === "answer");
    // Every node streams "twelve chars" then dies: two more nodes continue it (three attempts in all) before the
    // turn fails, so the client was sent 36 characters, which the estimate counts as 9 tokens.
    expect(answer).toMatchObject({ estimated: true, cachedInputTokens: 0, outputTokens: 9 });
    expect(answer?.inputTokens).toBeGreaterThan(0);
    // No summary runs after a failed answer.
    expect(recordedUsage[0]?.hops.map((hop) => hop.hop)).toEqual(["route", "answer"]);
  });

  it("does not fail the turn when the recorder does", async () => {
    const scripted = createScriptedHops({});
    const { deps, outbox, recorded } = createTestDeps(scripted.hops, {
      usage: { record: () => Promise.reject(new Error("D1 down")) },
    });
    const turns = new ConversationTurns({ ...deps, store: new MemoryConversationStore(META), outbox });
    const result = turns.startTurn({ conversationId: META.id, text: "hi" });
    if (!result.ok) throw new Error(result.refusal.code);
    const parts = await collectParts(result.stream);
    await turns.afterTurns(() => Promise.resolve());
    expect(parts.at(-1)?.type).toBe("turn-finish");
    expect(recorded.charges).toHaveLength(1);
  });
});

function tokens(input: number, output: number) {
  return { inputTokens: input, cachedInputTokens: 0, outputTokens: output };
}
