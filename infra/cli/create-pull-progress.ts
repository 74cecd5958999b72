import cliProgress from "cli-progress";
import type { PullProgress } from "../../gpu-nodes/tools/models/pull-model.ts";
import type { TextSink } from "./cli-io.ts";

/**
 * A bar on a terminal; elsewhere (CI logs, `npm start` piped to a file) one line per tenth, since a redrawn
 * bar there is a wall of carriage returns.
 */
export function createPullProgress(sink: TextSink & { isTTY?: boolean }): (label: string) => PullProgress {
  return (label) => {
    if (sink.isTTY === true) {
      const bar = new cliProgress.SingleBar(
        {
          stream: sink as NodeJS.WritableStream,
          format: `${label} [{bar}] {percentage}% {done}/{all} MB {eta_formatted}`,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      let started = false;
      return {
        update(done, total) {
          const payload = { done: (done / 1e6).toFixed(1), all: (total / 1e6).toFixed(1) };
          if (!started) bar.start(total, 0, payload);
          started = true;
          bar.update(done, payload);
        },
        stop: () => bar.stop(),
      };
    }
    let lastTenth = -1;
    return {
      update(done, total) {
        const tenth = Math.floor((done / Math.max(total, 1)) * 10);
        if (tenth === lastTenth) return;
        lastTenth = tenth;
        sink.write(`${label}: ${tenth * 10}% of ${(total / 1e6).toFixed(1)} MB\n`);
      },
      stop: () => undefined,
    };
  };
}
