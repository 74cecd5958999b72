import { percentile } from "../stats.ts";

/** One routed example: the gold label, the router's label and the probability it gave that label. */
export interface RoutePrediction {
  id: string;
  gold: string;
  predicted: string;
  confidence: number;
  /** Edge-measured route hop time; absent for routers that make no hop (the keyword baseline). */
  hopMs?: number | undefined;
  /** Prompt tokens the hop evaluated (not found in the KV slot) and those it reused; absent without a hop. */
  prefillTokens?: number | undefined;
  cachedTokens?: number | undefined;
  /** The label of the turn before, when the example has earlier turns. */
  previous?: string | undefined;
}

export interface RouteMetrics {
  n: number;
  accuracy: number;
  macroF1: number;
  perLabel: Record<string, { precision: number; recall: number; f1: number; support: number }>;
  /** confusion[gold][predicted] = count. */
  confusion: Record<string, Record<string, number>>;
  /** Expected calibration error over `bins` equal-width confidence bins. */
  ece: number;
  hopMs: { p50: number; p95: number } | null;
  /** Per hop: evaluated (uncached) and reused prompt tokens, p50; null without hops. */
  prefillTokens?: { p50: number; cachedP50: number } | null;
}

export function measureRouting(
  predictions: readonly RoutePrediction[],
  labels: readonly string[],
  bins = 10,
): RouteMetrics {
  const confusion = Object.fromEntries(labels.map((g) => [g, Object.fromEntries(labels.map((p) => [p, 0]))]));
  for (const p of predictions) {
    const row = confusion[p.gold];
    if (row && p.predicted in row) row[p.predicted] = (row[p.predicted] ?? 0) + 1;
  }
  const perLabel = Object.fromEntries(
    labels.map((label) => {
      const tp = predictions.filter((p) => p.gold === label && p.predicted === label).length;
      const predictedN = predictions.filter((p) => p.predicted === label).length;
      const support = predictions.filter((p) => p.gold === label).length;
      const precision = predictedN === 0 ? 0 : tp / predictedN;
      const recall = support === 0 ? 0 : tp / support;
      const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
      return [label, { precision, recall, f1, support }];
    }),
  );
  const correct = predictions.filter((p) => p.gold === p.predicted).length;
  const hops = predictions.flatMap((p) => (p.hopMs === undefined ? [] : [p.hopMs]));
  const prefilled = predictions.flatMap((p) => (p.prefillTokens === undefined ? [] : [p.prefillTokens]));
  const cached = predictions.flatMap((p) => (p.cachedTokens === undefined ? [] : [p.cachedTokens]));
  return {
    n: predictions.length,
    accuracy: predictions.length === 0 ? 0 : correct / predictions.length,
    macroF1: labels.reduce((s, l) => s + (perLabel[l]?.f1 ?? 0), 0) / Math.max(1, labels.length),
    perLabel,
    confusion,
    ece: expectedCalibrationError(predictions, bins),
    hopMs: hops.length === 0 ? null : { p50: percentile(hops, 50), p95: percentile(hops, 95) },
    prefillTokens:
      prefilled.length === 0 ? null : { p50: percentile(prefilled, 50), cachedP50: percentile(cached, 50) },
  };
}

/** Σ_bins (|bin| / n) · |accuracy(bin) − mean confidence(bin)|; confidence 1 falls in the last bin. */
export function expectedCalibrationError(predictions: readonly RoutePrediction[], bins = 10): number {
  if (predictions.length === 0) return 0;
  let total = 0;
  for (let b = 0; b < bins; b++) {
    const inBin = predictions.filter((p) => Math.min(bins - 1, Math.floor(p.confidence * bins)) === b);
    if (inBin.length === 0) continue;
    const accuracy = inBin.filter((p) => p.gold === p.predicted).length / inBin.length;
    const confidence = inBin.reduce((s, p) => s + p.confidence, 0) / inBin.length;
    total += (inBin.length / predictions.length) * Math.abs(accuracy - confidence);
  }
  return total;
}

/** The harness rule for a low-confidence route: keep the previous turn's specialist, when there is one. */
export function applyLowConfidenceRule(p: RoutePrediction, threshold: number): RoutePrediction {
  return p.previous !== undefined && p.confidence < threshold ? { ...p, predicted: p.previous } : p;
}

/**
 * The threshold, from `candidates`, that gives the best accuracy on `predictions` (dev) with the rule
 * applied; ties go to the lowest, so the rule overrides the router as seldom as it can.
 */
export function chooseLowConfidenceThreshold(
  predictions: readonly RoutePrediction[],
  candidates: readonly number[] = Array.from({ length: 20 }, (_, i) => i / 20),
): { threshold: number; accuracy: number; overridden: number } {
  let best = { threshold: 0, accuracy: -1, overridden: 0 };
  for (const threshold of [...candidates].sort((a, b) => a - b)) {
    const ruled = predictions.map((p) => applyLowConfidenceRule(p, threshold));
    const accuracy = ruled.filter((p) => p.gold === p.predicted).length / Math.max(1, ruled.length);
    if (accuracy > best.accuracy) {
      const overridden = ruled.filter((p, i) => p.predicted !== predictions[i]?.predicted).length;
      best = { threshold, accuracy, overridden };
    }
  }
  return best;
}
