import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WIRE_VERSION, type NodeStatus } from "../../schema/wire/v2/index.ts";
import {
  DEFAULT_NODE_LOAD,
  ESTIMATE_TOLERANCE,
  chooseNode,
  estimateFirstTokenMs,
  estimateFor,
  isSaturated,
} from "../../workers/src/fleet/choose-node.ts";
import { PlacementLedger } from "../../workers/src/fleet/placement-ledger.ts";

function node(
  nodeId: string,
  options: {
    warm?: string[];
    inFlight?: number;
    freeSlots?: number;
    queueDepth?: number;
    adapters?: string[];
  } = {},
): NodeStatus {
  return {
    version: WIRE_VERSION,
    nodeId,
    engine: "llama.cpp",
    baseModel: { name: "tiny", revision: "r" },
    adapters: (options.adapters ?? ["chat", "coding"]).map((id) => ({
      id,
      revision: "r",
      lora: true,
      totalSlots: 4,
      freeSlots: options.freeSlots ?? 4,
      warmConversations: options.warm ?? [],
    })),
    inFlight: options.inFlight ?? 0,
    maxConcurrent: 8,
    queueDepth: options.queueDepth ?? 0,
    features: [],
    startedAt: 0,
    updatedAt: 0,
    heartbeatIntervalMs: 1000,
  };
}

describe("chooseNode", () => {
  it("places only on nodes that speak this edge's wire version, whatever else they hold", () => {
    const old = { ...node("a", { warm: ["c1"] }), version: "molmesh.v1" };
    const both = { ...node("b"), version: "molmesh.v1", wireVersions: ["molmesh.v1", WIRE_VERSION] };
    expect(chooseNode({ nodes: [old], adapter: "chat", conversationId: "c1" })).toEqual({
      reason: "queue-group",
    });
    expect(chooseNode({ nodes: [old, both], adapter: "chat", conversationId: "c1" })).toEqual({
      nodeId: "b",
      reason: "least-loaded",
    });
  });

  it("serves a versioned adapter name only where that revision is held, and a bare label anywhere", () => {
    const revA = {
      ...node("a"),
      adapters: [
        {
          id: "chat",
          revision: "sha256:aaaaaaaaaaaaaaaa",
          lora: true,
          totalSlots: 4,
          freeSlots: 4,
          warmConversations: [],
        },
      ],
    };
    const revB = {
      ...node("b"),
      adapters: [
        {
          id: "chat",
          revision: "sha256:bbbbbbbbbbbbbbbb",
          lora: true,
          totalSlots: 4,
          freeSlots: 4,
          warmConversations: [],
        },
      ],
    };
    expect(
      chooseNode({ nodes: [revA, revB], adapter: "chat@bbbbbbbbbbbb", conversationId: "c1" }).nodeId,
    ).toBe("b");
    expect(chooseNode({ nodes: [revA, revB], adapter: "chat@aaaaaaaa", conversationId: "c1" }).nodeId).toBe(
      "a",
    );
    expect(chooseNode({ nodes: [revA], adapter: "chat@cccccccccccc", conversationId: "c1" })).toEqual({
      reason: "queue-group",
    });
    expect(chooseNode({ nodes: [revA, revB], adapter: "chat", conversationId: "c1" }).nodeId).toBeDefined();
  });

  it("passes over nodes that lack a feature the hop needs, even a warm one", () => {
    const tools = { ...node("b"), features: ["output:tools", "output:tools-auto"] };
    const choice = chooseNode({
      nodes: [node("a", { warm: ["c1"] }), tools],
      adapter: "chat",
      conversationId: "c1",
      requires: ["output:tools", "output:tools-auto"],
    });
    expect(choice).toEqual({ nodeId: "b", reason: "least-loaded" });
    expect(
      chooseNode({ nodes: [node("a")], adapter: "chat", conversationId: "c1", requires: ["output:tools"] }),
    ).toEqual({ reason: "queue-group" });
  });

  it("prefers the node whose KV is warm, even when it is busier", () => {
    const choice = chooseNode({
      nodes: [node("a"), node("b", { warm: ["c1"], inFlight: 5 })],
      adapter: "chat",
      conversationId: "c1",
    });
    expect(choice).toEqual({ nodeId: "b", reason: "warm" });
  });

  it("remembers the last node from the timeline when heartbeats have not caught up", () => {
    const choice = chooseNode({
      nodes: [node("a"), node("b")],
      adapter: "chat",
      conversationId: "c1",
      lastNodeId: "b",
    });
    expect(choice).toEqual({ nodeId: "b", reason: "warm" });
  });

  it("spills from a saturated warm node to the least-loaded other node, and says so", () => {
    const warm = node("a", { warm: ["c1"], inFlight: 8 });
    const choice = chooseNode({
      nodes: [warm, node("b", { inFlight: 3 }), node("c", { inFlight: 1 })],
      adapter: "chat",
      conversationId: "c1",
    });
    expect(choice).toEqual({ nodeId: "c", reason: "spill", spilledFrom: "a" });
  });

  it("never picks a node without the adapter, or one that already failed the hop", () => {
    const nodes = [node("a", { adapters: ["coding"] }), node("b"), node("c")];
    expect(chooseNode({ nodes, adapter: "chat", conversationId: "x", exclude: new Set(["b"]) }).nodeId).toBe(
      "c",
    );
    expect(
      chooseNode({ nodes: [node("a", { adapters: ["coding"] })], adapter: "chat", conversationId: "x" }),
    ).toEqual({ reason: "queue-group" });
  });

  it("spreads new conversations evenly and stably over equally loaded nodes", () => {
    const nodes = ["a", "b", "c", "d"].map((id) => node(id));
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const pick = chooseNode({ nodes, adapter: "chat", conversationId: `conv-${i}` }).nodeId as string;
      counts.set(pick, (counts.get(pick) ?? 0) + 1);
      expect(
        chooseNode({ nodes: [...nodes].reverse(), adapter: "chat", conversationId: `conv-${i}` }).nodeId,
      ).toBe(pick);
    }
    for (const count of counts.values()) expect(count).toBeGreaterThan(60);
  });
});

describe("chooseNode: time to first token", () => {
  const withLoad = (status: NodeStatus, load: NodeStatus["load"], maxConcurrent = 8): NodeStatus => ({
    ...status,
    maxConcurrent,
    ...(load ? { load } : {}),
  });

  it("keeps a long conversation on its warm node though its queue is longer", () => {
    const load = { prefillTokensPerSecond: 400, hopMs: 2_000 };
    const choice = chooseNode({
      nodes: [withLoad(node("a", { warm: ["c1"], inFlight: 3 }), load), withLoad(node("b"), load)],
      adapter: "chat",
      conversationId: "c1",
      promptTokens: 2_000,
      warmTokens: 1_500,
    });
    expect(choice).toEqual({ nodeId: "a", reason: "warm" });
  });

  it("spills when the warm node's queue costs more than a cold prefill elsewhere, and says so", () => {
    const load = { prefillTokensPerSecond: 2_000, hopMs: 3_000 };
    const choice = chooseNode({
      nodes: [
        withLoad(node("a", { warm: ["c1"], inFlight: 7, queueDepth: 12 }), load),
        withLoad(node("b", { inFlight: 1 }), load),
      ],
      adapter: "chat",
      conversationId: "c1",
      promptTokens: 300,
      warmTokens: 250,
    });
    expect(choice).toEqual({ nodeId: "b", reason: "spill", spilledFrom: "a" });
  });

  it("counts hops placed since a node's heartbeat as load there", () => {
    const nodes = [node("a"), node("b")];
    const alone = chooseNode({ nodes, adapter: "chat", conversationId: "c9", promptTokens: 500 });
    const other = alone.nodeId === "a" ? "b" : "a";
    const busy = new Map([[alone.nodeId as string, 3]]);
    expect(
      chooseNode({ nodes, adapter: "chat", conversationId: "c9", promptTokens: 500, recentHops: busy })
        .nodeId,
    ).toBe(other);
  });

  it("spreads a burst of new conversations placed between two heartbeats", () => {
    const nodes = ["a", "b", "c", "d"].map((id) => node(id));
    let clock = 1_000;
    const ledger = new PlacementLedger(() => clock);
    for (let i = 0; i < 16; i++) {
      clock += 10;
      const recentHops = ledger.recentHops(() => 0);
      const pick = chooseNode({ nodes, adapter: "chat", conversationId: `burst-${i}`, recentHops });
      ledger.record({
        nodeId: pick.nodeId as string,
        hop: "answer",
        conversationId: `burst-${i}`,
        adapter: "chat",
        promptTokens: 1_000,
      });
    }
    const counts = [...ledger.recentHops(() => 0).values()];
    expect(counts).toHaveLength(4);
    expect(Math.max(...counts)).toBeLessThanOrEqual(5);
  });

  const loadArb = fc.option(
    fc.record({
      prefillTokensPerSecond: fc.double({ min: 20, max: 20_000, noNaN: true }),
      hopMs: fc.double({ min: 0, max: 10_000, noNaN: true }),
    }),
    { nil: undefined },
  );
  const nodeArb = (id: string) =>
    fc
      .record({
        inFlight: fc.integer({ min: 0, max: 12 }),
        queueDepth: fc.integer({ min: 0, max: 20 }),
        freeSlots: fc.integer({ min: 0, max: 4 }),
        maxConcurrent: fc.integer({ min: 1, max: 16 }),
        load: loadArb,
      })
      .map((o) => withLoad(node(id, o), o.load, o.maxConcurrent));
  const fleetArb = fc.integer({ min: 1, max: 6 }).chain((n) =>
    fc.record({
      nodes: fc.tuple(...Array.from({ length: n }, (_, i) => nodeArb(`n${i}`))),
      warmIndex: fc.integer({ min: -1, max: n - 1 }),
      promptTokens: fc.integer({ min: 1, max: 8_000 }),
      warmShare: fc.double({ min: 0, max: 1, noNaN: true }),
      recent: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: n, maxLength: n }),
    }),
  );

  it("never picks a node whose estimate is worse than another open node's (beyond the tolerance)", () => {
    fc.assert(
      fc.property(fleetArb, (f) => {
        const warm = f.nodes[f.warmIndex];
        const recentHops = new Map(f.nodes.map((n, i) => [n.nodeId, f.recent[i] ?? 0]));
        const q = {
          nodes: f.nodes,
          adapter: "chat",
          conversationId: "c1",
          ...(warm ? { lastNodeId: warm.nodeId } : {}),
          promptTokens: f.promptTokens,
          warmTokens: Math.floor(f.promptTokens * f.warmShare),
          recentHops,
        };
        const choice = chooseNode(q);
        const chosen = f.nodes.find((n) => n.nodeId === choice.nodeId);
        expect(chosen).toBeDefined();
        const open = f.nodes.filter((n) => !isSaturated(n, "chat", recentHops.get(n.nodeId)));
        const pool = open.length > 0 ? open : f.nodes;
        expect(pool).toContain(chosen);
        const estimate = (n: NodeStatus) => estimateFor(n, n === warm, q);
        const best = Math.min(...pool.map(estimate));
        expect(estimate(chosen as NodeStatus)).toBeLessThanOrEqual(best * (1 + ESTIMATE_TOLERANCE));
        if (warm && choice.nodeId !== warm.nodeId) expect(choice.spilledFrom).toBe(warm.nodeId);
      }),
      { numRuns: 500 },
    );
  });

  it("picks the warm node when every node's queue and rates are the same", () => {
    fc.assert(
      fc.property(
        nodeArb("x"),
        fc.integer({ min: 2, max: 6 }),
        fc.nat(),
        fc.integer({ min: 2, max: 8_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (template, count, warmSeed, promptTokens, warmShare) => {
          const nodes = Array.from({ length: count }, (_, i) => ({ ...template, nodeId: `n${i}` }));
          const warm = nodes[warmSeed % count] as NodeStatus;
          const choice = chooseNode({
            nodes,
            adapter: "chat",
            conversationId: "c1",
            lastNodeId: warm.nodeId,
            promptTokens,
            warmTokens: Math.floor(promptTokens * warmShare),
          });
          expect(choice).toEqual({ nodeId: warm.nodeId, reason: "warm" });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("estimates a cold prefill on an idle node from its rate, and a queue behind a full node from its hop time", () => {
    const idle = withLoad(node("a"), { prefillTokensPerSecond: 1_000, hopMs: 2_000 });
    expect(estimateFirstTokenMs(idle, 2_000)).toBe(2_000);
    // 8 running of 8 and 4 queued: it waits for 5 hops' worth of slots at 8 at a time, then shares with 7.
    const full = withLoad(node("b", { inFlight: 8, queueDepth: 4 }), {
      prefillTokensPerSecond: 1_000,
      hopMs: 2_000,
    });
    expect(estimateFirstTokenMs(full, 100)).toBeCloseTo((5 / 8) * 2_000 + 100 * 8, 6);
    expect(estimateFirstTokenMs(node("c"), 500)).toBe(1_000); // no `load`: the defaults, 500 tokens/s
    expect(DEFAULT_NODE_LOAD.prefillTokensPerSecond).toBe(500);
  });

  it("ranks a node that has not timed a prefill yet like its peers (their median), so it gets hops", () => {
    const measured = ["a", "b", "c"].map((id) =>
      withLoad(node(id), { prefillTokensPerSecond: 8_000 + id.charCodeAt(0), hopMs: 300 }),
    );
    const nodes = [...measured, node("late")];
    const served = new Set<string>();
    for (let i = 0; i < 40; i++) {
      served.add(chooseNode({ nodes, adapter: "chat", conversationId: `new-${i}` }).nodeId as string);
    }
    expect(served.has("late")).toBe(true);
  });
});
