import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MolWireError, OverloadedError } from "../../schema/wire/v2/index.ts";
import { answerInput, collectAnswer, type CollectedAnswer } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

// A node that runs 2 hops at once and lets 62 wait: 64 hops fit exactly, a 65th is past the bound.
const MAX_CONCURRENT = 2;
const MAX_QUEUED = 62;
const VIEW = "user: say something short\nassistant:";
const SHORT = { sampling: { maxTokens: 8, temperature: 0 } };
const LONGER = { sampling: { maxTokens: 48, temperature: 0 } };

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({
    natsUrl: nats.url,
    models: inject("models"),
    node: { maxConcurrent: MAX_CONCURRENT, maxQueued: MAX_QUEUED },
  });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const ADAPTERS = ["chat", "agent", "coding", "genui"];

/** One short answer hop of `tenantId`, on a conversation of its own (so no two hops share a KV slot). */
function fire(tenantId: string, i: number, sampling = SHORT): Promise<CollectedAnswer | MolWireError> {
  const adapter = ADAPTERS[i % ADAPTERS.length] as string;
  return collectAnswer(
    t.client,
    answerInput(`fair-${tenantId}-${i}-${Date.now()}`, adapter, VIEW, { ...sampling, tenantId }),
  ).catch((error: unknown) => {
    if (error instanceof MolWireError) return error;
    throw error;
  });
}

async function gauge(name: string): Promise<number> {
  const metric = await t.node.metrics.registry.getSingleMetric(name)?.get();
  return metric?.values[0]?.value ?? 0;
}

async function overloads(): Promise<number> {
  const metric = await t.node.metrics.registry.getSingleMetric("molmesh_overloads_total")?.get();
  return (metric?.values ?? []).reduce((n, v) => n + v.value, 0);
}

describe("the node's fair queue over NATS", () => {
  it("serves 64 concurrent hops from 4 tenants on a 2-hop node without refusing any", async () => {
    const before = await overloads();
    const outcomes = await Promise.all(Array.from({ length: 64 }, (_, i) => fire(`tenant-${i % 4}`, i)));
    const errors = outcomes.filter((o) => o instanceof MolWireError);
    expect(errors.map((e) => e.code)).toEqual([]);
    const answers = outcomes as CollectedAnswer[];
    for (const answer of answers) expect(answer.finish.type).toBe("finish");
    // They did queue: most waited for admission, and that wait shows in queueMs.
    expect(answers.filter((a) => a.finish.timings.queueMs > 0).length).toBeGreaterThan(32);
    expect(await overloads()).toBe(before);
    expect(await gauge("molmesh_admission_queued")).toBe(0);
  });

  it("serves a light tenant's hop ahead of a heavy tenant's backlog", async () => {
    const finished: string[] = [];
    const done = (tenant: string) => (outcome: CollectedAnswer | MolWireError) => {
      finished.push(tenant);
      return outcome;
    };
    // Longer hops, so the backlog cannot drain while it builds, even on a busy machine.
    const heavy = Array.from({ length: 40 }, (_, i) => fire("heavy", i, LONGER).then(done("heavy")));
    await expect.poll(() => gauge("molmesh_admission_queued"), { timeout: 10_000 }).toBeGreaterThan(25);
    expect(await gauge("molmesh_admission_queued_tenants")).toBe(1);
    const doneBefore = finished.length;
    const light = fire("light", 0).then(done("light"));
    const outcomes = await Promise.all([...heavy, light]);
    expect(outcomes.filter((o) => o instanceof MolWireError)).toEqual([]);
    // Round robin: it runs at the next free slot, not after the 25-odd heavy hops queued before it (FIFO).
    expect(finished.indexOf("light") - doneBefore).toBeLessThanOrEqual(MAX_CONCURRENT + 3);
  });

  it("past the queue bound answers overloaded with retryAfterMs, and serves the rest", async () => {
    const before = await overloads();
    const outcomes = await Promise.all(Array.from({ length: 128 }, (_, i) => fire(`tenant-${i % 4}`, i)));
    const refused = outcomes.filter((o) => o instanceof OverloadedError);
    const served = outcomes.filter((o) => !(o instanceof MolWireError));
    expect(outcomes.filter((o) => o instanceof MolWireError && !(o instanceof OverloadedError))).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThanOrEqual(MAX_CONCURRENT + MAX_QUEUED);
    for (const error of refused) {
      expect(error.retryable).toBe(true);
      expect(error.retryAfterMs).toBeGreaterThanOrEqual(250);
      expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
    }
    expect((await overloads()) - before).toBe(refused.length);
  });
});
