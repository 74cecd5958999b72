import { setMaxListeners } from "node:events";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CancelledError, DeadlineExceededError, OverloadedError } from "../../schema/wire/v2/index.ts";
import { Admission } from "../../gpu-nodes/src/service/admission.ts";

const never = new AbortController().signal;
// Every queued hop in these tests listens on this one signal; in the node each hop has its own.
setMaxListeners(0, never);

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Enters `count` hops for `tenantId`, recording the order in which they are admitted. */
function enterMany(
  admission: Admission,
  tenantId: string | undefined,
  count: number,
  admitted: string[],
): Array<Promise<() => void>> {
  return Array.from({ length: count }, () =>
    admission.enter({ tenantId, signal: never }).then((release) => {
      admitted.push(tenantId ?? "anonymous");
      return release;
    }),
  );
}

describe("Admission (the node's fair queue)", () => {
  it("runs up to maxConcurrent at once and queues the rest instead of refusing them", async () => {
    const admission = new Admission({ maxConcurrent: 2, maxQueued: 10 });
    const admitted: string[] = [];
    const hops = enterMany(admission, "t", 5, admitted);
    await settle();
    expect(admission.inFlight).toBe(2);
    expect(admission.queued).toBe(3);
    for (const hop of hops) (await hop)();
    expect(admitted).toHaveLength(5);
    expect(admission.inFlight).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it("serves tenants in turn: a light tenant's hop waits behind one of the heavy tenant's 100, not all", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 1000 });
    const first = await admission.enter({ tenantId: "heavy", signal: never });
    const order: string[] = [];
    const enter = (tenantId: string) =>
      admission.enter({ tenantId, signal: never }).then((release) => {
        order.push(tenantId);
        release();
      });
    const heavy = Array.from({ length: 100 }, () => enter("heavy"));
    const light = enter("light");
    expect(admission.queuedByTenant()).toEqual(
      new Map([
        ["heavy", 100],
        ["light", 1],
      ]),
    );
    expect(admission.queuedTenants).toBe(2);
    first();
    await Promise.all([...heavy, light]);
    expect(order.indexOf("light")).toBe(1);
    expect(order).toHaveLength(101);
  });

  it("never lets a backlogged tenant starve another (property: DRR bounds each tenant's wait)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 2, maxLength: 6 }),
        async (maxConcurrent, backlog) => {
          const admission = new Admission({ maxConcurrent, maxQueued: 10_000 });
          const busy = await Promise.all(
            Array.from({ length: maxConcurrent }, () => admission.enter({ tenantId: "busy", signal: never })),
          );
          const order: string[] = [];
          const pending = backlog.flatMap((count, t) =>
            Array.from({ length: count }, () =>
              admission.enter({ tenantId: `t${t}`, signal: never }).then((release) => {
                order.push(`t${t}`);
                release();
              }),
            ),
          );
          for (const release of busy) release();
          await Promise.all(pending);
          // Unit cost, all queued from the start: when a tenant's k-th hop runs, no other tenant ran more than k.
          const served = new Map<string, number>();
          for (const tenant of order) {
            const k = (served.get(tenant) ?? 0) + 1;
            served.set(tenant, k);
            for (const n of served.values()) expect(n).toBeLessThanOrEqual(k);
          }
          expect(order).toHaveLength(backlog.reduce((a, b) => a + b, 0));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("weights by cost: a tenant's share of the engine follows its quantum, not its backlog", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 100, quantum: 2 });
    const first = await admission.enter({ tenantId: "x", signal: never });
    const order: string[] = [];
    const enter = (tenantId: string, cost: number) =>
      admission.enter({ tenantId, cost, signal: never }).then((release) => {
        order.push(tenantId);
        release();
      });
    const hops = [
      ...Array.from({ length: 4 }, () => enter("cheap", 1)),
      ...Array.from({ length: 2 }, () => enter("dear", 2)),
    ];
    first();
    await Promise.all(hops);
    expect(order).toEqual(["cheap", "cheap", "dear", "cheap", "cheap", "dear"]);
  });

  it("ends a hop whose deadline passes while it waits, without ever running it", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 10 });
    const running = await admission.enter({ signal: never });
    const controller = new AbortController();
    let ran = false;
    const queued = admission.enter({ tenantId: "t", signal: controller.signal }).then(() => {
      ran = true;
    });
    await settle();
    expect(admission.queued).toBe(1);
    controller.abort(new DeadlineExceededError("hop exceeded its deadline of 5 ms"));
    await expect(queued).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(admission.queued).toBe(0);
    expect(admission.queuedTenants).toBe(0);
    running();
    await settle();
    expect(ran).toBe(false);
    expect(admission.inFlight).toBe(0);
  });

  it("takes a cancelled hop out of the queue; the next in line runs in its place", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 10 });
    const running = await admission.enter({ signal: never });
    const controller = new AbortController();
    const cancelled = admission.enter({ tenantId: "a", signal: controller.signal });
    const next = admission.enter({ tenantId: "b", signal: never });
    controller.abort(new CancelledError("cancelled by the requester"));
    await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
    running();
    (await next)();
    expect(admission.inFlight).toBe(0);
    await expect(admission.enter({ signal: controller.signal })).rejects.toBeInstanceOf(CancelledError);
  });

  it("answers overloaded with retryAfterMs only past the queue bound", async () => {
    let clock = 0;
    const admission = new Admission({ maxConcurrent: 2, maxQueued: 4, now: () => clock });
    const held = await Promise.all([0, 1].map(() => admission.enter({ signal: never })));
    clock = 3_000;
    held[0]?.();
    const runningAgain = await admission.enter({ signal: never });
    const queued = [0, 1, 2, 3].map(() => admission.enter({ signal: never }));
    await settle();
    expect(admission.queued).toBe(4);
    const refused = admission.enter({ signal: never });
    await expect(refused).rejects.toBeInstanceOf(OverloadedError);
    const error = (await refused.catch((e: unknown) => e)) as OverloadedError;
    // 5 hops ahead, 2 at a time, ~1.4 s each (the running mean after one 3 s hop).
    expect(error.retryAfterMs).toBe(Math.round((5 / 2) * (1_000 + 0.2 * (3_000 - 1_000))));
    expect(error.retryable).toBe(true);
    runningAgain();
    held[1]?.();
    for (const hop of queued) (await hop)();
  });

  it("with maxQueued 0 refuses at once past maxConcurrent (the old behaviour)", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 0 });
    const running = await admission.enter({ signal: never });
    await expect(admission.enter({ signal: never })).rejects.toMatchObject({
      code: "overloaded",
      message: "node is at its limit of 1 concurrent hops",
    });
    running();
    (await admission.enter({ signal: never }))();
  });

  it("at the bound sheds the newest hop of the longest queue for a tenant holding fewer", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 3 });
    const running = await admission.enter({ signal: never });
    const heavy = [0, 1, 2].map(() => admission.enter({ tenantId: "heavy", signal: never }));
    const light = admission.enter({ tenantId: "light", signal: never });
    await expect(heavy[2]).rejects.toBeInstanceOf(OverloadedError);
    expect(admission.queuedByTenant()).toEqual(
      new Map([
        ["heavy", 2],
        ["light", 1],
      ]),
    );
    // The heavy tenant itself gets no such room: its own hop is the one refused.
    await expect(admission.enter({ tenantId: "heavy", signal: never })).rejects.toBeInstanceOf(
      OverloadedError,
    );
    running();
    // Served in turn: heavy, light, heavy.
    for (const hop of [heavy[0], light, heavy[1]]) (await hop)?.();
    expect(admission.inFlight).toBe(0);
  });
});

describe("Admission's summary lane (maxConcurrentSummaries)", () => {
  const summary = (admission: Admission, tenantId = "t") =>
    admission.enter({ tenantId, lane: "summary", signal: never });
  const turn = (admission: Admission, tenantId = "t") => admission.enter({ tenantId, signal: never });

  it("admits a route or answer at once while summaries fill and queue in their own lane", async () => {
    const admission = new Admission({ maxConcurrent: 2, maxConcurrentSummaries: 2, maxQueued: 10 });
    const summaries = [0, 1, 2, 3].map(() => summary(admission));
    await settle();
    expect(admission.inFlight).toBe(2);
    expect(admission.queued).toBe(2);
    const admitted: string[] = [];
    const turns = [0, 1, 2].map((i) =>
      turn(admission).then((release) => (admitted.push(`turn ${i}`), release)),
    );
    await settle();
    // Two turns run beside the two summaries; the third waits for a turn, not for the queued summaries.
    expect(admitted).toEqual(["turn 0", "turn 1"]);
    expect(admission.inFlight).toBe(4);
    (await summaries[0])?.();
    await settle();
    expect(admitted).toEqual(["turn 0", "turn 1"]);
    (await turns[0])?.();
    await settle();
    expect(admitted).toEqual(["turn 0", "turn 1", "turn 2"]);
    for (const hop of [...summaries.slice(1), ...turns.slice(1)]) (await hop)();
    expect(admission.inFlight).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it("keeps one queue bound over both lanes, and sheds across them for a lighter tenant", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxConcurrentSummaries: 1, maxQueued: 2 });
    const running = [await turn(admission), await summary(admission)];
    const heavy = [turn(admission, "heavy"), summary(admission, "heavy")];
    await expect(turn(admission, "heavy")).rejects.toBeInstanceOf(OverloadedError);
    const light = summary(admission, "light");
    await expect(heavy[1]).rejects.toBeInstanceOf(OverloadedError);
    expect(admission.queuedByTenant()).toEqual(
      new Map([
        ["heavy", 1],
        ["light", 1],
      ]),
    );
    expect(admission.queuedTenants).toBe(2);
    for (const release of running) release();
    for (const hop of [heavy[0], light]) (await hop)?.();
    expect(admission.inFlight).toBe(0);
  });

  it("without one, a summary holds one of maxConcurrent and a route or answer queues behind it", async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 10 });
    const held = await summary(admission);
    let admitted = false;
    const next = turn(admission).then((release) => ((admitted = true), release));
    await settle();
    expect(admitted).toBe(false);
    held();
    (await next)();
    expect(admitted).toBe(true);
  });

  it("says when a hop starts waiting where summaries run, so the engine stops holding them back", async () => {
    let calls = 0;
    const onWaitBehindSummaries = () => {
      calls++;
    };
    const shared = new Admission({ maxConcurrent: 1, maxQueued: 10, onWaitBehindSummaries });
    const held = await summary(shared);
    expect(calls).toBe(0);
    const next = turn(shared);
    expect(calls).toBe(1);
    held();
    (await next)();
    // With a lane of their own, a route or answer waiting for its lane waits for no summary.
    calls = 0;
    const laned = new Admission({
      maxConcurrent: 1,
      maxConcurrentSummaries: 1,
      maxQueued: 10,
      onWaitBehindSummaries,
    });
    const running = [await turn(laned), await summary(laned)];
    const waiting = [turn(laned)];
    expect(calls).toBe(0);
    waiting.push(summary(laned));
    expect(calls).toBe(1);
    for (const release of running) release();
    for (const hop of waiting) (await hop)();
  });
});
