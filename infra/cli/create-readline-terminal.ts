import { createInterface } from "node:readline";
import type { ChatTerminal, TerminalInput } from "./chat-terminal.ts";

export interface ReadlineTerminalOptions {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
  /** The process: when stdin is not a terminal, Ctrl-C arrives as a SIGINT signal rather than a keypress. */
  signals: {
    on(event: "SIGINT", listener: () => void): unknown;
    off(event: "SIGINT", listener: () => void): unknown;
  };
}

/**
 * node:readline behind the ChatTerminal contract. Lines are queued as they arrive, because piped input comes
 * in chunks of many lines (and the end right after) while a turn is still streaming.
 */
export function createReadlineTerminal({ input, output, signals }: ReadlineTerminalOptions): ChatTerminal {
  const interactive = input.isTTY === true;
  const rl = createInterface({ input, output, terminal: interactive });
  const lines: string[] = [];
  let ended = false;
  let interrupts = 0;
  let waiter: ((input: TerminalInput) => void) | undefined;
  let interruptListener: (() => void) | undefined;

  const takeNext = (): TerminalInput | undefined => {
    if (interrupts > 0) {
      interrupts--;
      return { kind: "interrupt" };
    }
    const line = lines.shift();
    if (line !== undefined) return { kind: "line", text: line };
    return ended ? { kind: "eof" } : undefined;
  };
  const settle = (): void => {
    if (waiter === undefined) return;
    const next = takeNext();
    if (next === undefined) return;
    const resolve = waiter;
    waiter = undefined;
    resolve(next);
  };
  const interrupt = (): void => {
    if (interruptListener !== undefined) return interruptListener();
    interrupts++;
    settle();
  };
  const onKeyboardInterrupt = (): void => {
    // Like a shell: Ctrl-C on a half-typed line discards the line; only on an empty one does it mean "leave".
    if (interruptListener === undefined && rl.line !== "") {
      rl.write(null, { ctrl: true, name: "u" });
      return;
    }
    interrupt();
  };

  rl.on("line", (line) => {
    lines.push(line);
    settle();
  });
  rl.on("close", () => {
    ended = true;
    settle();
  });
  rl.on("SIGINT", onKeyboardInterrupt);
  signals.on("SIGINT", interrupt);

  return {
    interactive,
    readLine(prompt) {
      if (interactive) {
        rl.setPrompt(prompt);
        rl.prompt();
      }
      return new Promise((resolve) => {
        waiter = resolve;
        settle();
      });
    },
    captureInterrupts(listener) {
      interruptListener = listener;
      return () => {
        if (interruptListener === listener) interruptListener = undefined;
      };
    },
    close() {
      signals.off("SIGINT", interrupt);
      rl.close();
    },
  };
}
