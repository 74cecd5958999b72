import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { ConversationTimeline } from "../../workers/src/conversation/conversation-timeline.ts";
import { MemoryConversationStore, META } from "./turn-loop-fixtures.ts";

const user = (turnId: string, text: string) =>
  ({ type: "user_message", turnId, text, harnessHash: "h" }) as const;

/** Counts the store's turn reads: a turn read once is kept and grown, not read again. */
function countingStore() {
  const store = new MemoryConversationStore(META);
  let reads = 0;
  const readTurn = store.readTurn;
  store.readTurn = (turnId: string) => {
    reads += 1;
    return readTurn(turnId);
  };
  return { store, reads: () => reads };
}

describe("a timeline's turn reads", () => {
  it("say what the store says, after appends here and by another timeline on the same store", () => {
    const { store, reads } = countingStore();
    const a = new ConversationTimeline(store, DEFAULT_HARNESS, "h");
    const b = new ConversationTimeline(store, DEFAULT_HARNESS, "h");
    a.append(user("t1", "first"));
    expect(a.readTurn("t1")).toEqual(store.events);
    a.append({ type: "turn_cancelled", turnId: "t1", reason: "test", partialChars: 0 });
    b.append(user("t2", "second"), { type: "turn_cancelled", turnId: "t1", reason: "late", partialChars: 1 });
    for (const turnId of ["t1", "t2"]) {
      expect(a.readTurn(turnId)).toEqual(store.readTurn(turnId));
      expect(b.readTurn(turnId)).toEqual(store.readTurn(turnId));
    }
    const before = reads();
    a.readTurn("t1");
    a.readTurn("t2");
    expect(reads()).toBe(before);
    // A caller that changes the array it got changes nothing kept.
    a.readTurn("t1").length = 0;
    expect(a.readTurn("t1")).toHaveLength(3);
  });

  it("keep nothing once the store was emptied under them", async () => {
    const { store } = countingStore();
    const timeline = new ConversationTimeline(store, DEFAULT_HARNESS, "h");
    timeline.append(user("t1", "first"));
    expect(timeline.readTurn("t1")).toHaveLength(1);
    await store.deleteAll();
    expect(timeline.readTurn("t1")).toEqual([]);
  });
});
