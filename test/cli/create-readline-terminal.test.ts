import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createReadlineTerminal } from "../../infra/cli/cli-io.ts";

function openPipedTerminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  const signals = new EventEmitter();
  const terminal = createReadlineTerminal({
    input,
    output,
    signals: {
      on: (event, listener) => signals.on(event, listener),
      off: (event, listener) => signals.off(event, listener),
    },
  });
  return { terminal, input, output, signals };
}

describe("createReadlineTerminal over a pipe", { timeout: 5000 }, () => {
  it("queues lines that arrive in one chunk, then reports the end, and shows no prompt", async () => {
    const { terminal, input, output } = openPipedTerminal();
    input.end("one\ntwo\n\nthree");

    expect(terminal.interactive).toBe(false);
    expect(await terminal.readLine("you> ")).toEqual({ kind: "line", text: "one" });
    expect(await terminal.readLine("you> ")).toEqual({ kind: "line", text: "two" });
    expect(await terminal.readLine("you> ")).toEqual({ kind: "line", text: "" });
    expect(await terminal.readLine("you> ")).toEqual({ kind: "line", text: "three" });
    expect(await terminal.readLine("you> ")).toEqual({ kind: "eof" });
    expect(output.read()).toBeNull();
    terminal.close();
  });

  it("gives a SIGINT to the captured listener during a turn, and to the pending read otherwise", async () => {
    const { terminal, input, signals } = openPipedTerminal();
    let captured = 0;
    const release = terminal.captureInterrupts(() => captured++);
    signals.emit("SIGINT");
    release();
    expect(captured).toBe(1);

    const read = terminal.readLine("you> ");
    signals.emit("SIGINT");
    expect(await read).toEqual({ kind: "interrupt" });

    terminal.close();
    expect(signals.listenerCount("SIGINT")).toBe(0);
    input.end();
  });
});
