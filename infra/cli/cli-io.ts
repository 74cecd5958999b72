import { createInterface } from "node:readline";
import { styleText } from "node:util";

/** Where text goes; `process.stdout` fits, and so does a test's buffer. */
export interface TextSink {
  write(text: string): unknown;
}

/** The fetch the openai client calls; injected so tests answer without a network. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Everything the CLI touches outside itself, so every command runs the same under test as in a shell. */
export interface CliDeps {
  fetch: FetchLike;
  env: Readonly<Record<string, string | undefined>>;
  stdout: TextSink;
  stderr: TextSink;
  /** Opened only by `chat`: the other commands never read stdin. */
  openTerminal: () => ChatTerminal;
  /** ANSI styling of status lines; off for pipes and under NO_COLOR. */
  color: boolean;
}

export type TerminalInput = { kind: "line"; text: string } | { kind: "eof" } | { kind: "interrupt" };

/**
 * What the chat loop needs from a terminal. An interrupt (Ctrl-C) goes to the captured listener while a turn
 * streams, and otherwise ends the pending read, so the loop decides what a Ctrl-C means at each moment.
 */
export interface ChatTerminal {
  /** A person types here: show prompts; piped input is echoed instead, so a transcript reads as a dialogue. */
  readonly interactive: boolean;
  readLine(prompt: string): Promise<TerminalInput>;
  /** Routes interrupts to `listener` until the returned release function is called. */
  captureInterrupts(listener: () => void): () => void;
  close(): void;
}

export interface TextStyle {
  dim(text: string): string;
  red(text: string): string;
}

/**
 * Plain text when off, so pipes, logs and tests never see escape codes. The caller has already decided (TTY,
 * NO_COLOR), so styleText must not second-guess it against process.stdout (`validateStream`, Node ≥ 22.13).
 */
export function createTextStyle(enabled: boolean): TextStyle {
  if (!enabled) return { dim: (text) => text, red: (text) => text };
  return {
    dim: (text) => styleText("dim", text, { validateStream: false }),
    red: (text) => styleText("red", text, { validateStream: false }),
  };
}

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
    if (interruptListener !== undefined) {
      interruptListener();
      return;
    }
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
