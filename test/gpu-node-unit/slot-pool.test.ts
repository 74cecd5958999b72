import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OverloadedError } from "../../schema/wire/v2/index.ts";
import { SlotPool } from "../../gpu-nodes/src/engine/llama/slot-pool.ts";

const never = new AbortController().signal;

describe("SlotPool", () => {
  it("keeps a conversation on its slot and evicts the least recently used one", async () => {
    const pool = new SlotPool(["s0", "s1"], { maxWaiting: 0 });
    const a = await pool.acquire("a", never);
    a.release();
    const b = await pool.acquire("b", never);
    b.release();
    const a2 = await pool.acquire("a", never);
    expect(a2.slot).toBe(a.slot);
    a2.release();
    const c = await pool.acquire("c", never);
    expect(c.slot).toBe(b.slot);
    expect(c.rebound).toBe(true);
    c.release();
    expect(pool.warmConversations()).toEqual(["c", "a"]);
  });

  it("grows: a request waiting for a full pool takes a slot added, and the waiting room grows too", async () => {
    const pool = new SlotPool(["s0"], { maxWaiting: 1 });
    const held = await pool.acquire("a", never);
    const waiting = pool.acquire("b", never);
    await expect(pool.acquire("c", never)).rejects.toBeInstanceOf(OverloadedError);
    pool.grow(["s1"], 1);
    expect((await waiting).slot).toBe("s1");
    expect(pool.total).toBe(2);
    const c = pool.acquire("c", never);
    const d = pool.acquire("d", never);
    expect(pool.waiting).toBe(2);
    held.release();
    expect((await c).slot).toBe("s0");
    await expect(Promise.race([d, Promise.resolve("still waiting")])).resolves.toBe("still waiting");
  });

  it("queues up to maxWaiting, then refuses with overloaded", async () => {
    const pool = new SlotPool(["s0"], { maxWaiting: 1 });
    const first = await pool.acquire("a", never);
    const waiting = pool.acquire("a", never);
    await expect(pool.acquire("b", never)).rejects.toBeInstanceOf(OverloadedError);
    expect(pool.waiting).toBe(1);
    first.release();
    const second = await waiting;
    expect(second.slot).toBe("s0");
    second.release();
    expect(pool.free).toBe(1);
  });

  it("drops an aborted waiter with the abort reason", async () => {
    const pool = new SlotPool(["s0"], { maxWaiting: 4 });
    const held = await pool.acquire("a", never);
    const controller = new AbortController();
    const waiting = pool.acquire("b", controller.signal);
    controller.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    expect(pool.waiting).toBe(0);
    held.release();
  });

  it("never lends one slot twice and never loses a slot, whatever the schedule", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ conv: fc.constantFrom("a", "b", "c", "d", "e"), hold: fc.nat(3) }), {
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 4 }),
        async (ops, slots) => {
          const pool = new SlotPool(
            Array.from({ length: slots }, (_, i) => i),
            { maxWaiting: 100 },
          );
          const inUse = new Set<number>();
          await Promise.all(
            ops.map(async ({ conv, hold }) => {
              const lease = await pool.acquire(conv, never);
              expect(inUse.has(lease.slot)).toBe(false);
              inUse.add(lease.slot);
              for (let i = 0; i < hold; i++) await Promise.resolve();
              inUse.delete(lease.slot);
              lease.release();
            }),
          );
          expect(pool.free).toBe(slots);
          expect(pool.waiting).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
