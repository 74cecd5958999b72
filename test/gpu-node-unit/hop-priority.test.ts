import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HopPriority, type HopPriorityOptions } from "../../gpu-nodes/src/engine/hop-priority.ts";

const never = new AbortController().signal;

function createPriority(overrides: Partial<HopPriorityOptions> = {}): HopPriority {
  return new HopPriority({
    enabled: true,
    maxDeferralMs: 1_000,
    resumeAfterIdleMs: 20,
    now: () => Date.now(),
    ...overrides,
  });
}

/** Whether `promise` has settled once pending timers up to `ms` have run. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await vi.advanceTimersByTimeAsync(ms);
  return settled;
}

describe("HopPriority", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("lets a summary decode at once while no route or answer runs", async () => {
    const summary = createPriority().beginBackground("s");
    expect(await settledWithin(summary.pause(never), 0)).toBe(true);
  });

  it("pauses a summary while a latency hop runs, and resumes it once the engine was idle a moment", async () => {
    const priority = createPriority();
    const endAnswer = priority.beginLatency();
    const pause = priority.beginBackground("s").pause(never);
    expect(await settledWithin(pause, 500)).toBe(false);
    expect(priority.stats()).toMatchObject({ latencyActive: 1, paused: 1, pauses: 1 });
    endAnswer();
    // A route's next step (or the turn's answer) starting within the idle time keeps it paused.
    expect(await settledWithin(pause, 10)).toBe(false);
    const endNext = priority.beginLatency();
    expect(await settledWithin(pause, 100)).toBe(false);
    endNext();
    expect(await settledWithin(pause, 20)).toBe(true);
    expect(priority.stats()).toMatchObject({ latencyActive: 0, paused: 0, deferredMs: 630, agedOut: 0 });
  });

  it("bounds starvation: after maxDeferralMs paused in all, a summary runs on under load", async () => {
    const priority = createPriority({ maxDeferralMs: 300 });
    priority.beginLatency();
    const summary = priority.beginBackground("s");
    expect(await settledWithin(summary.pause(never), 299)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settledWithin(summary.pause(never), 0)).toBe(true);
    expect(priority.stats()).toMatchObject({ agedOut: 1, pauses: 1, deferredMs: 300 });
  });

  it("stops pausing a summary once another hop queues for its slot", async () => {
    const priority = createPriority();
    priority.beginLatency();
    const held = priority.beginBackground("chat/summary/c");
    const other = priority.beginBackground("chat/summary/d");
    const pause = held.pause(never);
    const otherPause = other.pause(never);
    priority.hurry("chat/summary/c");
    expect(await settledWithin(pause, 0)).toBe(true);
    expect(await settledWithin(held.pause(never), 0)).toBe(true);
    expect(await settledWithin(otherPause, 0)).toBe(false);
    // What a route slot's view extension reads to drop itself once the conversation's next hop waits.
    expect(held.hurried).toBe(true);
    expect(other.hurried).toBe(false);
  });

  it("bounds a summary by its own deferral bound when that is below the engine's", async () => {
    const priority = createPriority({ maxDeferralMs: 1_000 });
    priority.beginLatency();
    const summary = priority.beginBackground("s", { maxDeferralMs: 200 });
    const first = summary.pause(never);
    expect(await settledWithin(first, 199)).toBe(false);
    expect(await settledWithin(first, 1)).toBe(true);
    expect(await settledWithin(summary.pause(never), 0)).toBe(true);
    expect(priority.stats()).toMatchObject({ agedOut: 1, deferredMs: 200 });
    // And never above the engine's.
    const long = priority.beginBackground("t", { maxDeferralMs: 5_000 });
    const pause = long.pause(never);
    expect(await settledWithin(pause, 999)).toBe(false);
    expect(await settledWithin(pause, 1)).toBe(true);
  });

  it("stops pausing the summaries of a pool whose every slot a hop found busy, and only those", async () => {
    const priority = createPriority();
    priority.beginLatency();
    const chatPool = { name: "chat summaries" };
    const agentPool = { name: "agent summaries" };
    const inChat = priority.beginBackground("chat/summary/c", { pool: chatPool }).pause(never);
    const inAgent = priority.beginBackground("agent/summary/c", { pool: agentPool }).pause(never);
    const extension = priority.beginBackground("l0/main/c", { counted: false, pool: chatPool });
    const extending = extension.pause(never);
    priority.hurryPool(chatPool);
    expect(await settledWithin(inChat, 0)).toBe(true);
    expect(await settledWithin(inAgent, 0)).toBe(false);
    // A route slot's view extension is no summary: it keeps waiting for the engine to be idle.
    expect(await settledWithin(extending, 0)).toBe(false);
    expect(extension.hurried).toBe(false);
  });

  it("stops pausing every summary once a hop waits for the admission they hold", async () => {
    const priority = createPriority();
    priority.beginLatency();
    const pauses = ["chat/summary/c", "agent/summary/d"].map((key) =>
      priority.beginBackground(key, { pool: {} }).pause(never),
    );
    expect(await settledWithin(Promise.all(pauses), 100)).toBe(false);
    priority.hurrySummaries();
    expect(await settledWithin(Promise.all(pauses), 0)).toBe(true);
  });

  it("keeps background work that is not a summary out of the summary figures", async () => {
    const priority = createPriority();
    const endRoute = priority.beginLatency();
    const extension = priority.beginBackground("l0/main/c", { counted: false });
    const pause = extension.pause(never);
    expect(priority.stats()).toMatchObject({ paused: 0, pauses: 0 });
    endRoute();
    expect(await settledWithin(pause, 20)).toBe(true);
    expect(priority.stats()).toMatchObject({ paused: 0, pauses: 0, deferredMs: 0 });
  });

  it("ends a paused summary with its signal's reason", async () => {
    const priority = createPriority();
    priority.beginLatency();
    const controller = new AbortController();
    const pause = priority.beginBackground("s").pause(controller.signal);
    controller.abort(new Error("deadline"));
    await expect(pause).rejects.toThrow("deadline");
    expect(priority.stats().paused).toBe(0);
  });

  it("never pauses when turned off (MOL_SUMMARY_YIELD=0)", async () => {
    const priority = createPriority({ enabled: false });
    priority.beginLatency();
    expect(await settledWithin(priority.beginBackground("s").pause(never), 0)).toBe(true);
    expect(priority.stats().pauses).toBe(0);
  });
});
