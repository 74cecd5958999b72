import type { ChatTerminal, TerminalInput } from "../../infra/cli/cli-io.ts";

export const CTRL_C = Symbol("ctrl-c");
export type ScriptStep = string | typeof CTRL_C;

/** A terminal that types `script` one step per prompt, then hits EOF; `interrupt()` is a Ctrl-C mid-turn. */
export function createScriptedTerminal(script: readonly ScriptStep[], interactive = false) {
  const steps = [...script];
  const state = { prompts: 0, closed: false };
  let listener: (() => void) | undefined;
  const terminal: ChatTerminal = {
    interactive,
    readLine() {
      state.prompts++;
      const step = steps.shift();
      const input: TerminalInput =
        step === undefined
          ? { kind: "eof" }
          : step === CTRL_C
            ? { kind: "interrupt" }
            : { kind: "line", text: step };
      return Promise.resolve(input);
    },
    captureInterrupts(next) {
      listener = next;
      return () => {
        if (listener === next) listener = undefined;
      };
    },
    close() {
      state.closed = true;
    },
  };
  return {
    terminal,
    state,
    interrupt(): boolean {
      listener?.();
      return listener !== undefined;
    },
  };
}
