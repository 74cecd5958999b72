import { placeOverFleet } from "../../workers/src/fleet/hop-placement.ts";
import { describe, expect, it } from "vitest";
import { WIRE_VERSION, type NodeStatus } from "../../schema/wire/v2/index.ts";
import { placeHop, type HopPlacement } from "../../workers/src/generate/place-generate.ts";
import { PlacementLedger, estimatePromptTokens } from "../../workers/src/fleet/placement-ledger.ts";

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

/** Where placement sends one answer: the node (its own subject) or undefined (the queue group's). */
async function targetsOf(placement: HopPlacement) {
  const targets: Array<string | undefined> = [];
  const { placement: record } = await placeHop(
    { placement, hop: "answer", adapter: "chat", conversationId: "c1", canRetry: () => false },
    (nodeId) => {
      targets.push(nodeId);
      return Promise.resolve("ok");
    },
  );
  return { targets, reason: record.reason };
}

describe("placing a hop", () => {
  it("sends it to the warm node when placement picks nodes", async () => {
    const placed = await targetsOf(placeOverFleet({ nodes: () => Promise.resolve([warmNode]) }));
    expect(placed.targets).toEqual(["n1"]);
    expect(placed.reason).not.toBe("queue-group");
  });

  it("leaves it to NATS's queue group in the baseline, whatever the fleet holds", async () => {
    let reads = 0;
    const placed = await targetsOf(
      placeOverFleet({
        picksNodes: false,
        nodes: () => {
          reads++;
          return Promise.resolve([warmNode]);
        },
      }),
    );
    expect(placed.targets).toEqual([undefined]);
    expect(placed.reason).toBe("queue-group");
    // Not even asked: in the baseline only the conversation object reads the fleet, for the served chat format.
    expect(reads).toBe(0);
  });

  it("counts a long answer as held by its node: the next turn stays warm with a summary running beside it", async () => {
    const ledger = new PlacementLedger(() => 0);
    let fleet: NodeStatus[] = [warmNode];
    const placement = placeOverFleet({ nodes: () => Promise.resolve(fleet), ledger });
    const answer = "word ".repeat(1_000);
    const turn = async (prompt: string) =>
      placeHop(
        {
          placement,
          hop: "answer",
          adapter: "chat",
          conversationId: "c1",
          promptTokens: estimatePromptTokens(prompt),
          canRetry: () => false,
        },
        () => Promise.resolve({ text: answer }),
        (answered) => estimatePromptTokens(prompt + answered.text),
      );
    const firstPrompt = "user: tell me a long story\n".repeat(40);
    expect((await turn(firstPrompt)).placement.reason).toBe("warm");
    // The warm node now decodes that turn's summary; an idle node joined. The new prompt repeats the answer.
    const cold = {
      ...warmNode,
      nodeId: "n2",
      adapters: warmNode.adapters.map((a) => ({ ...a, warmConversations: [] })),
    };
    fleet = [{ ...warmNode, inFlight: 1 }, cold];
    const next = await turn(`${firstPrompt}${answer}\nuser: and then?\n`);
    expect(next.placement).toEqual({ reason: "warm", attempts: [] });
    expect(ledger.heldTokens("c1", "chat", "answer")).toBe(
      estimatePromptTokens(`${firstPrompt}${answer}\nuser: and then?\n${answer}`),
    );
  });
});
