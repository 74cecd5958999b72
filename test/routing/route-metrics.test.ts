import { describe, expect, it } from "vitest";
import { routeByKeywords } from "../bench/routing/keyword-router.ts";
import {
  applyLowConfidenceRule,
  chooseLowConfidenceThreshold,
  expectedCalibrationError,
  measureRouting,
  type RoutePrediction,
} from "../bench/routing/route-metrics.ts";
import { normalise } from "../../gpu-nodes/src/engine/llama/score-choices.ts";

const LABELS = ["chat", "coding", "agent", "genui"];
const p = (gold: string, predicted: string, confidence = 0.9, previous?: string): RoutePrediction => ({
  id: `${gold}-${predicted}-${confidence}`,
  gold,
  predicted,
  confidence,
  previous,
});

describe("route metrics", () => {
  it("computes accuracy, per-label precision/recall, macro-F1 and the confusion matrix by hand", () => {
    const preds = [p("chat", "chat"), p("chat", "coding"), p("coding", "coding"), p("agent", "agent")];
    const m = measureRouting(preds, LABELS);
    expect(m.accuracy).toBe(0.75);
    expect(m.perLabel["chat"]).toMatchObject({ precision: 1, recall: 0.5, support: 2 });
    expect(m.perLabel["coding"]).toMatchObject({ precision: 0.5, recall: 1, support: 1 });
    expect(m.perLabel["genui"]).toMatchObject({ precision: 0, recall: 0, f1: 0, support: 0 });
    // F1: chat 2/3, coding 2/3, agent 1, genui 0.
    expect(m.macroF1).toBeCloseTo((2 / 3 + 2 / 3 + 1 + 0) / 4, 10);
    expect(m.confusion["chat"]).toEqual({ chat: 1, coding: 1, agent: 0, genui: 0 });
    expect(m.hopMs).toBeNull();
  });

  it("has zero calibration error when confidence matches accuracy, and the gap when it does not", () => {
    const calibrated = [
      p("chat", "chat", 0.75),
      p("chat", "chat", 0.75),
      p("chat", "chat", 0.75),
      p("chat", "agent", 0.75),
    ];
    expect(expectedCalibrationError(calibrated)).toBeCloseTo(0, 10);
    const over = [p("chat", "agent", 1), p("chat", "chat", 1)];
    expect(expectedCalibrationError(over)).toBeCloseTo(0.5, 10);
  });

  it("reports hop percentiles when hops were timed", () => {
    const timed = [10, 20, 30, 40].map((ms) => ({ ...p("chat", "chat"), hopMs: ms }));
    expect(measureRouting(timed, LABELS).hopMs).toEqual({ p50: 20, p95: 40 });
  });

  it("chooses the low-confidence threshold that helps on dev, and keeps the previous label only under it", () => {
    const dev = [
      p("coding", "chat", 0.4, "coding"),
      p("chat", "chat", 0.9, "coding"),
      p("genui", "genui", 0.6),
    ];
    const chosen = chooseLowConfidenceThreshold(dev);
    expect(chosen.accuracy).toBe(1);
    expect(chosen.threshold).toBeGreaterThan(0.4);
    expect(chosen.threshold).toBeLessThanOrEqual(0.9);
    expect(applyLowConfidenceRule(dev[0] as RoutePrediction, chosen.threshold).predicted).toBe("coding");
    expect(applyLowConfidenceRule(dev[2] as RoutePrediction, 0.99).predicted).toBe("genui"); // no previous turn
  });

  it("normalises label scores into probabilities, even when no label is reachable", () => {
    const probs = normalise([Math.log(0.2), Math.log(0.6), Math.log(0.2)]);
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(probs[1]).toBeCloseTo(0.6, 12);
    expect(normalise([-Infinity, -Infinity])).toEqual([0.5, 0.5]);
  });

  it("the keyword baseline labels any message, empty or binary included, with a confidence in [0, 1]", () => {
    for (const message of [
      "",
      "\u0000\u0001\uFFFD",
      "x".repeat(100_000),
      "fix this python bug",
      "book a table",
    ]) {
      const { label, confidence } = routeByKeywords(message);
      expect(LABELS).toContain(label);
      expect(confidence).toBeGreaterThanOrEqual(0);
      expect(confidence).toBeLessThanOrEqual(1);
    }
    expect(routeByKeywords("fix this python bug").label).toBe("coding");
  });
});
