import type { ChatTerminal } from "./chat-terminal.ts";

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
