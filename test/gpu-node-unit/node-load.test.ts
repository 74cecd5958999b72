import { describe, expect, it } from "vitest";
import { NodeLoadMeter } from "../../gpu-nodes/src/service/node-load.ts";

describe("NodeLoadMeter", () => {
  it("reports nothing until it timed a prefill, and ignores prefills too short to time", () => {
    const meter = new NodeLoadMeter();
    meter.recordPrefill(10, 1, 1);
    expect(meter.describe(1_234.4)).toBeUndefined();
    meter.recordPrefill(500, 1_000, 1);
    expect(meter.describe(1_234.4)).toEqual({ prefillTokensPerSecond: 500, hopMs: 1_234 });
  });

  it("moves toward the engine's rate: one hop's rate times the hops sharing the engine", () => {
    const meter = new NodeLoadMeter();
    for (let i = 0; i < 60; i++) meter.recordPrefill(1_000, 4_000, 4); // 250 tokens/s each, 4 sharing
    expect(meter.describe(0)?.prefillTokensPerSecond).toBeCloseTo(1_000, 0);
  });
});
