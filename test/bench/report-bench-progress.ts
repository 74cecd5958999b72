/** A progress message from a benchmark to `npm run bench`, which draws it as a bar. */
export interface BenchProgress {
  type: "bench-progress";
  step: string;
  done: number;
  total: number;
}

/** What the runner gets over IPC is whatever the child sent; only this shape is drawn. */
export function isBenchProgress(message: unknown): message is BenchProgress {
  return (
    typeof message === "object" && message !== null && "type" in message && message.type === "bench-progress"
  );
}

/**
 * Tells the runner how far this benchmark is. Only over the IPC channel the runner opens: a benchmark run on its
 * own (`npm run bench:node`) has none and stays quiet, and its stdout stays the plain markdown report.
 */
export function reportBenchProgress(step: string, done: number, total: number): void {
  if (!process.send || !process.connected) return;
  const message: BenchProgress = { type: "bench-progress", step, done, total };
  process.send(message);
}
