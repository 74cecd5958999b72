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
