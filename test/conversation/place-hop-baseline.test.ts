import { describe, expect, it } from "vitest";
import {
  WIRE_VERSION,
  buildHopSubject,
  buildNodeHopSubject,
  type NodeStatus,
} from "../../schema/wire/v1/index.ts";
import { placeHop, type HopPlacement } from "../../workers/src/conversation/place-hop.ts";

/** One node that holds the conversation's warm KV for "chat". */
const warmNode: NodeStatus = {
  version: WIRE_VERSION,
  nodeId: "n1",
  engine: "llama.cpp",
  baseModel: { name: "SmolLM2", revision: "r" },
  adapters: ["l0", "chat"].map((id) => ({
    id,
    revision: "r",
    lora: true,
    totalSlots: 4,
    freeSlots: 3,
    warmConversations: id === "chat" ? ["c1"] : [],
  })),
  inFlight: 0,
  maxConcurrent: 8,
  queueDepth: 0,
  features: [],
  startedAt: 0,
  updatedAt: 0,
  heartbeatIntervalMs: 1000,
};

async function subjectFor(placement: HopPlacement) {
  const subjects: string[] = [];
  const { placement: record } = await placeHop(
    { placement, hop: "answer", adapter: "chat", conversationId: "c1", canRetry: () => false },
    (subject) => {
      subjects.push(subject);
      return Promise.resolve("ok");
    },
  );
  return { subjects, reason: record.reason };
}

describe("placing a hop", () => {
  it("sends it to the warm node when placement picks nodes", async () => {
    const placed = await subjectFor({ nodes: () => Promise.resolve([warmNode]) });
    expect(placed.subjects).toEqual([buildNodeHopSubject("n1", "answer")]);
    expect(placed.reason).not.toBe("queue-group");
  });

  it("leaves it to NATS's queue group in the baseline, whatever the fleet holds", async () => {
    let reads = 0;
    const placed = await subjectFor({
      picksNodes: false,
      nodes: () => {
        reads++;
        return Promise.resolve([warmNode]);
      },
    });
    expect(placed.subjects).toEqual([buildHopSubject("answer")]);
    expect(placed.reason).toBe("queue-group");
    // Not even asked: in the baseline only the conversation object reads the fleet, for the served chat format.
    expect(reads).toBe(0);
  });
});
