import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { ConversationTimeline } from "../../workers/src/conversation/conversation-timeline.ts";
import type { GenerateRequestInput } from "../../schema/wire/v2/index.ts";
import { buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import {
  META,
  MemoryConversationStore,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "../conversation/turn-loop-fixtures.ts";

/**
 * A harness change between two turns of a stored conversation: the timeline gets a `harness_changed` event where
 * the change took effect, the views rebuild from the timeline under the new harness, and only what the change
 * touched loses its prefix (and so its KV on the nodes). Harness B differs from A in the `chat` specialist's
 * system prompt alone.
 */

const A: HarnessDocument = DEFAULT_HARNESS;
const B: HarnessDocument = {
  ...A,
  specialists: {
    ...A.specialists,
    chat: {
      ...(A.specialists.chat as NonNullable<HarnessDocument["specialists"][string]>),
      systemPrompt: "B chats.",
    },
  },
};
const HASH_A = "sha256:aaaa";
const HASH_B = "sha256:bbbb";
/** The specialist each turn goes to, in order: A for the first four, B after. */
const ROUTES = ["coding", "chat", "coding", "chat", "coding", "chat", "coding", "chat", "coding", "chat"];
const TURNS_UNDER_A = 4;

/** How many leading characters two strings share. */
function sharedPrefix(one: string, other: string): number {
  let i = 0;
  while (i < one.length && i < other.length && one[i] === other[i]) i++;
  return i;
}

/** The prompts a timeline renders for every hop of every adapter. */
function renderAll(timeline: ConversationTimeline, harness: HarnessDocument): string[] {
  return [
    timeline.routePrompt(),
    ...harness.router.labels.flatMap((label) => [
      timeline.answerPrompt(label),
      timeline.summaryPrompt(label),
    ]),
  ];
}

describe("a harness change between turns", () => {
  it("is appended before the turn's user message, and the views rebuild exactly, keeping untouched prefixes", async () => {
    let current = { harness: A, harnessHash: HASH_A };
    let routed = 0;
    const scripted = createScriptedHops({
      route: () => Promise.resolve({ label: ROUTES[routed++] ?? "chat" }),
    });
    const store = new MemoryConversationStore(META);
    const { deps, outbox } = createTestDeps(scripted.hops, {
      chooseHarness: () =>
        Promise.resolve({ ...current, choice: { label: "production", arm: "production", source: "label" } }),
    });
    const turns = new ConversationTurns({ ...deps, store, outbox });
    const run = async (text: string) => {
      const result = turns.startTurn({ conversationId: META.id, text });
      if (!result.ok) throw new Error(result.refusal.message);
      await collectParts(result.stream);
      // The summary lands before the next turn, so each view holds it in full.
      await turns.afterTurns(() => Promise.resolve(undefined));
    };
    const answerPrompt = (i: number): string => (scripted.calls.answer[i] as GenerateRequestInput).prompt;
    const routePrompt = (i: number): string => (scripted.calls.route[i] as GenerateRequestInput).prompt;

    for (let i = 0; i < TURNS_UNDER_A; i++) await run(`Question ${String(i)} under A.`);
    expect(store.events.some((event) => event.type === "harness_changed")).toBe(false);
    current = { harness: B, harnessHash: HASH_B };
    for (let i = TURNS_UNDER_A; i < ROUTES.length; i++) await run(`Question ${String(i)} under B.`);

    // One event, first in the turn that ran under B, naming both hashes and where the documents differ.
    const changes = store.events.filter((event) => event.type === "harness_changed");
    expect(changes).toEqual([
      expect.objectContaining({ from: HASH_A, to: HASH_B, changed: ["/specialists/chat/systemPrompt"] }),
    ]);
    const firstUnderB = store.events.filter((event) => event.turnId === changes[0]?.turnId);
    expect(firstUnderB.map((event) => event.type).slice(0, 2)).toEqual(["harness_changed", "user_message"]);
    expect(firstUnderB[1]).toMatchObject({ harnessHash: HASH_B });

    // Untouched adapters keep their prefix across the change: the router's prompt and coding's answer prompt
    // under B start with their last prompts under A (so the nodes reuse their KV).
    expect(routePrompt(TURNS_UNDER_A).startsWith(routePrompt(TURNS_UNDER_A - 1))).toBe(true);
    expect(answerPrompt(TURNS_UNDER_A).startsWith(answerPrompt(TURNS_UNDER_A - 2))).toBe(true);
    // Chat's prompt changed from its system line on: what precedes that line is kept, nothing after it.
    const chatBefore = answerPrompt(TURNS_UNDER_A - 1);
    const chatAfter = answerPrompt(TURNS_UNDER_A + 1);
    const systemAt = chatBefore.indexOf(A.specialists.chat?.systemPrompt ?? "");
    expect(systemAt).toBeGreaterThanOrEqual(0);
    expect(sharedPrefix(chatBefore, chatAfter)).toBe(systemAt);
    expect(chatAfter).toContain("B chats.");
    // Within B, every adapter's prompts grow at their end again.
    expect(answerPrompt(ROUTES.length - 1).startsWith(chatAfter)).toBe(true);
    expect(routePrompt(ROUTES.length - 1).startsWith(routePrompt(TURNS_UNDER_A))).toBe(true);

    // The views the edge kept up turn by turn (stored under B after the change) are the views of the whole
    // timeline built from scratch under B; the harness_changed event adds nothing to them.
    const snapshot = store.snapshot;
    expect(snapshot?.harnessHash).toBe(HASH_B);
    const through = store.events.filter((event) => event.seq <= (snapshot?.throughSeq ?? 0));
    expect(through.at(-1)?.seq).toBeGreaterThan(changes[0]?.seq ?? Infinity);
    expect(JSON.parse(JSON.stringify(snapshot?.state))).toEqual(
      JSON.parse(JSON.stringify(buildConversationViews(through, B))),
    );
    expect(buildConversationViews(through, B)).toEqual(
      buildConversationViews(
        through.filter((event) => event.type !== "harness_changed"),
        B,
      ),
    );
    const rebuilt = new MemoryConversationStore(META);
    rebuilt.append(store.events.map(({ seq: _seq, createdAt: _createdAt, ...event }) => event));
    expect(renderAll(new ConversationTimeline(store, B, HASH_B), B)).toEqual(
      renderAll(new ConversationTimeline(rebuilt, B, HASH_B), B),
    );
  });
});
