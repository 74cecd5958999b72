import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import {
  PRODUCTION_LABEL,
  addressHarnessDocument,
  pickCanaryArm,
  readCanaryBucket,
} from "../../schema/harness/harness-registry.ts";
import {
  cacheHarnessRegistry,
  createHarnessChooser,
  createHarnessRegistryCaches,
  createHarnessRegistryReader,
  HARNESS_LABEL_TTL_MS,
} from "../../workers/src/harness-registry/choose-turn-harness.ts";
import type {
  HarnessLabel,
  HarnessLabelTarget,
  HarnessRegistryStore,
  HarnessVersion,
} from "../../workers/src/harness-registry/harness-registry-store.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { StartTurnResult } from "../../workers/src/conversation/conversation-rpc.ts";
import {
  META,
  MemoryConversationStore,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "../conversation/turn-loop-fixtures.ts";

const unused = (): never => {
  throw new Error("not used here");
};

/** Versions and labels in memory, as the D1 store answers them (a tenant sees its own and the global ones). */
function createMemoryRegistry() {
  const versions = new Map<string, HarnessVersion & { owner: string }>();
  const labels = new Map<string, HarnessLabel>();
  let reads = 0;
  const store: HarnessRegistryStore = {
    putVersion: unused,
    getVersion(viewer, hash) {
      reads++;
      const owner = viewer === "global" ? "*" : viewer.tenantId;
      return Promise.resolve(versions.get(`${owner}\n${hash}`) ?? versions.get(`*\n${hash}`));
    },
    listVersions: unused,
    getLabel(tenantId, name) {
      reads++;
      return Promise.resolve(labels.get(`${tenantId}\n${name}`));
    },
    listLabels: unused,
    moveLabel(move) {
      const label: HarnessLabel = {
        tenantId: move.tenantId,
        name: move.name,
        ...move.to,
        guard: move.guard ?? null,
        revision: 1,
        updatedBy: move.actor,
        updatedAt: move.at,
      };
      labels.set(`${move.tenantId}\n${move.name}`, label);
      return Promise.resolve(label);
    },
    listLabelHistory: unused,
    recordRolloutOutcome: unused,
    recordRolloutFeedback: unused,
    readRolloutCounts: unused,
    rollBackCanary: unused,
  };
  return {
    store,
    reads: () => reads,
    async add(owner: string, document: HarnessDocument): Promise<string> {
      const { hash, canonical, bytes } = await addressHarnessDocument(document);
      versions.set(`${owner}\n${hash}`, {
        owner,
        scope: owner === "*" ? "global" : "tenant",
        hash,
        document: canonical,
        bytes,
        parent: null,
        message: null,
        createdBy: "test",
        createdAt: 1,
      });
      return hash;
    },
    label(tenantId: string, name: string, to: HarnessLabelTarget) {
      return store.moveLabel({ tenantId, name, to, reason: null, actor: "test", at: 1, audit: AUDIT });
    },
  };
}

const AUDIT = {
  tenantId: "ten_a",
  actor: "test",
  action: "harness_label.moved" as const,
  target: "production",
  details: {},
  createdAt: 1,
};

const variant = (systemPrompt: string): HarnessDocument => ({
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, systemPrompt },
});

function setUp() {
  let now = 1_000;
  const registry = createMemoryRegistry();
  const caches = createHarnessRegistryCaches(() => now);
  const warnings: string[] = [];
  const choose = createHarnessChooser(
    createHarnessRegistryReader(registry.store, caches),
    caches.documents,
    (message) => warnings.push(message),
  );
  return { registry, caches, choose, warnings, advance: (ms: number) => (now += ms) };
}

describe("choosing a turn's harness", () => {
  it("takes the request pin, then the conversation pin, then the production label, else the default", async () => {
    const { registry, choose, advance } = setUp();
    const [a, b, c] = await Promise.all(
      ["A", "B", "C"].map((tag) => registry.add("ten_a", variant(`Route, ${tag}.`))),
    );
    const input = { tenantId: "ten_a", conversationKey: "conv_1" };
    expect(await choose(input)).toBeUndefined();
    await registry.label("ten_a", PRODUCTION_LABEL, { harness: a ?? "", canary: null });
    await registry.label("ten_a", "staging", { harness: b ?? "", canary: null });
    advance(HARNESS_LABEL_TTL_MS + 1); // the label's absence was cached by the first choice

    const production = await choose(input);
    expect(production?.harnessHash).toBe(a);
    expect(production?.harness.router.systemPrompt).toBe("Route, A.");
    expect(production?.choice).toEqual({ label: "production", arm: "production", source: "label" });

    const conversation = await choose({ ...input, conversationPin: "staging" });
    expect(conversation?.harnessHash).toBe(b);
    expect(conversation?.choice).toEqual({ label: "staging", arm: "production", source: "conversation" });

    const request = await choose({ ...input, conversationPin: "staging", requestPin: c ?? "" });
    expect(request?.harnessHash).toBe(c);
    expect(request?.choice).toEqual({ label: null, arm: null, source: "request" });
  });

  it("gives the canary its percent of conversations, each always the same arm; other tenants see nothing", async () => {
    const { registry, choose } = setUp();
    const stable = await registry.add("ten_a", variant("Stable."));
    const canary = await registry.add("ten_a", variant("Canary."));
    await registry.label("ten_a", PRODUCTION_LABEL, {
      harness: stable,
      canary: { harness: canary, percent: 50 },
    });
    const arms = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      const conversationKey = `conv_${i}`;
      const chosen = await choose({ tenantId: "ten_a", conversationKey });
      const expected = pickCanaryArm(await readCanaryBucket("ten_a", conversationKey), 50);
      expect(chosen?.choice.arm).toBe(expected);
      expect(chosen?.harnessHash).toBe(expected === "canary" ? canary : stable);
      arms.set(conversationKey, chosen?.choice.arm ?? "");
    }
    const canaries = [...arms.values()].filter((arm) => arm === "canary").length;
    expect(canaries).toBeGreaterThan(70);
    expect(canaries).toBeLessThan(130);
    for (const [conversationKey, arm] of arms)
      expect((await choose({ tenantId: "ten_a", conversationKey }))?.choice.arm).toBe(arm);
    // Tenant B has no label; a pin to A's version does not resolve for it (the Worker answers 404 before this).
    expect(await choose({ tenantId: "ten_b", conversationKey: "conv_1" })).toBeUndefined();
    expect(
      await choose({ tenantId: "ten_b", conversationKey: "conv_1", requestPin: stable }),
    ).toBeUndefined();
  });

  it("sees a label moved elsewhere within the TTL, and one moved through this isolate at once", async () => {
    const { registry, caches, choose, advance } = setUp();
    const one = await registry.add("*", variant("One."));
    const two = await registry.add("*", variant("Two."));
    const three = await registry.add("*", variant("Three."));
    await registry.label("ten_a", PRODUCTION_LABEL, { harness: one, canary: null });
    const input = { tenantId: "ten_a", conversationKey: "conv_1" };
    expect((await choose(input))?.harnessHash).toBe(one);

    // Another isolate moves it: this one keeps its cached label until the TTL passes.
    await registry.label("ten_a", PRODUCTION_LABEL, { harness: two, canary: null });
    expect((await choose(input))?.harnessHash).toBe(one);
    advance(HARNESS_LABEL_TTL_MS + 1);
    expect((await choose(input))?.harnessHash).toBe(two);

    // This isolate moves it: its cache is cleared with the write.
    const writer = cacheHarnessRegistry(registry.store, caches);
    await writer.moveLabel({
      tenantId: "ten_a",
      name: PRODUCTION_LABEL,
      to: { harness: three, canary: null },
      reason: null,
      actor: "test",
      at: 2,
      audit: AUDIT,
    });
    expect((await choose(input))?.harnessHash).toBe(three);
  });

  it("passes over a conversation pin that no longer resolves, and says so", async () => {
    const { registry, choose, warnings } = setUp();
    const hash = await registry.add("ten_a", variant("Kept."));
    await registry.label("ten_a", PRODUCTION_LABEL, { harness: hash, canary: null });
    const chosen = await choose({ tenantId: "ten_a", conversationKey: "c", conversationPin: "gone" });
    expect(chosen?.choice.source).toBe("label");
    expect(warnings).toEqual([expect.stringContaining("gone")]);
  });
});

describe("a conversation's turns under the registry", () => {
  it("record how the harness was chosen, and rebuild the views when it changes between turns", async () => {
    const registry = createMemoryRegistry();
    const caches = createHarnessRegistryCaches(() => 0);
    const choose = createHarnessChooser(
      createHarnessRegistryReader(registry.store, caches),
      caches.documents,
      unused,
    );
    const scripted = createScriptedHops({});
    const store = new MemoryConversationStore(META);
    const { deps, outbox } = createTestDeps(scripted.hops, { chooseHarness: choose });
    const turns = new ConversationTurns({ ...deps, store, outbox });
    const run = async (text: string, pin?: string) => {
      const result: StartTurnResult = turns.startTurn({
        conversationId: META.id,
        text,
        ...(pin === undefined ? {} : { harnessPin: pin }),
      });
      if (!result.ok) throw new Error(result.refusal.message);
      const parts = await collectParts(result.stream);
      await turns.afterTurns(() => Promise.resolve(undefined));
      const finish = parts.find((part) => part.type === "turn-finish");
      if (finish?.type !== "turn-finish") throw new Error("no turn-finish");
      return finish.turn;
    };

    const first = await run("Hello?");
    const coding = DEFAULT_HARNESS.specialists.coding?.adapter ?? "";
    const hops = [
      { hop: "route", adapter: DEFAULT_HARNESS.router.adapter, revision: "rev1" },
      { hop: "answer", adapter: coding, revision: "rev1" },
    ];
    expect(first.mol.harness).toEqual({
      hash: "hash-1",
      label: null,
      arm: null,
      source: "default",
      adapters: hops,
    });
    // The summary landed after the turn's answer: the stored turn lists its hop too.
    expect(turns.readTurn(first.turnId)?.turn.mol.harness?.adapters).toEqual([
      ...hops,
      { hop: "summary", adapter: coding, revision: "rev1" },
    ]);

    const pinned = await registry.add(META.tenantId, variant("Route with care."));
    const second = await run("And now?", pinned);
    expect(second.mol.harnessHash).toBe(pinned);
    expect(second.mol.harness).toMatchObject({ hash: pinned, label: null, arm: null, source: "request" });
    // The second turn's route prompt is the new harness's view, rebuilt from the timeline: its system line, and
    // the first turn's user line under it.
    const routePrompt = scripted.calls.route.at(-1)?.prompt ?? "";
    expect(routePrompt).toContain("Route with care.");
    expect(routePrompt).not.toContain(DEFAULT_HARNESS.router.systemPrompt);
    expect(routePrompt).toContain("Hello?");

    const user = store.events.filter((event) => event.type === "user_message");
    expect(user.map((event) => event.harness?.source)).toEqual(["default", "request"]);
  });
});
