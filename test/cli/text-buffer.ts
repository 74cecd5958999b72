import type { TextSink } from "../../infra/cli/cli-io.ts";

/** A TextSink that keeps what was written; `onWrite` lets a test act at a precise point of the output. */
export function createTextBuffer(onWrite?: (text: string) => void): TextSink & { text(): string } {
  const chunks: string[] = [];
  return {
    write(text: string) {
      chunks.push(text);
      onWrite?.(text);
      return true;
    },
    text: () => chunks.join(""),
  };
}
