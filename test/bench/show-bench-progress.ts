import cliProgress from "cli-progress";
import type { BenchProgress } from "./report-bench-progress.ts";

export interface BenchProgressDisplay {
  start(bench: string): void;
  update(progress: BenchProgress): void;
  finish(bench: string, outcome: string): void;
}

/**
 * A progress bar per benchmark on a terminal; one line per start and end otherwise, so CI logs and redirected
 * output stay readable.
 */
export function showBenchProgress(stream: NodeJS.WriteStream = process.stderr): BenchProgressDisplay {
  if (!stream.isTTY) {
    return {
      start: (bench) => stream.write(`bench ${bench}: running…\n`),
      update: () => undefined,
      finish: (bench, outcome) => stream.write(`bench ${bench}: ${outcome}\n`),
    };
  }
  let bar: cliProgress.SingleBar | null = null;
  return {
    start(bench) {
      bar = new cliProgress.SingleBar(
        {
          stream,
          format: `${bench.padEnd(12)} [{bar}] {value}/{total} {step} | {duration_formatted}`,
          hideCursor: true,
          clearOnComplete: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(1, 0, { step: "starting" });
    },
    update(progress) {
      bar?.setTotal(Math.max(1, progress.total));
      bar?.update(progress.done, { step: progress.step });
    },
    finish(bench, outcome) {
      bar?.stop();
      bar = null;
      stream.write(`bench ${bench}: ${outcome}\n`);
    },
  };
}
