import { runMolmesh } from "../../infra/cli/run-molmesh.ts";
import { createRecordingFetch, type MeshHandler } from "./recording-fetch.ts";
import { createScriptedTerminal, type ScriptStep } from "./scripted-terminal.ts";
import { createTextBuffer } from "./text-buffer.ts";

export interface InMemoryRun {
  argv: string[];
  handle?: MeshHandler;
  script?: ScriptStep[];
  env?: Record<string, string>;
  /** Called with each stdout write and the terminal, e.g. to press Ctrl-C once some text has streamed. */
  onStdout?: (text: string, terminal: ReturnType<typeof createScriptedTerminal>) => void;
}

const unexpectedRequest: MeshHandler = (request) => {
  throw new Error(`unexpected request ${request.method} ${request.path}`);
};

/** The whole CLI in this process: scripted input, recorded requests, captured output and exit code. */
export async function runCliInMemory(run: InMemoryRun) {
  const { fetch, requests } = createRecordingFetch(run.handle ?? unexpectedRequest);
  const terminal = createScriptedTerminal(run.script ?? []);
  const stdout = createTextBuffer((text) => run.onStdout?.(text, terminal));
  const stderr = createTextBuffer();
  const code = await runMolmesh(run.argv, {
    fetch,
    env: run.env ?? {},
    stdout,
    stderr,
    color: false,
    openTerminal: () => terminal.terminal,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text(), requests, terminal: terminal.state };
}
