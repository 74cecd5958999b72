/**
 * `molmesh`: a terminal client for any molmesh edge (chat, conversations, items). Everything it does lives in
 * runMolmesh; this file only hands it the real process.
 */
import process from "node:process";
import { isatty } from "node:tty";
import { createReadlineTerminal } from "./cli-io.ts";
import { runMolmesh } from "./run-molmesh.ts";

// `molmesh items … | head` closes the pipe early; that is the reader's choice, not an error to print.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

// Not `process.stdout.isTTY`: Node types it as boolean, but a piped stdout has no `isTTY` at all.
const stdoutIsTerminal = isatty(process.stdout.fd);

process.exitCode = await runMolmesh(process.argv.slice(2), {
  fetch: globalThis.fetch,
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  color: stdoutIsTerminal && process.env["NO_COLOR"] === undefined,
  openTerminal: () =>
    createReadlineTerminal({ input: process.stdin, output: process.stdout, signals: process }),
});
