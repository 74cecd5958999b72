import type OpenAI from "openai";
import type { TextSink } from "./cli-io.ts";
import type { ChatTerminal } from "./chat-terminal.ts";
import {
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  describeCliError,
  type CliErrorReport,
} from "./describe-cli-error.ts";
import { formatStatusLine } from "./format-status-line.ts";
import { streamTurn, type TurnOutcome } from "./stream-turn.ts";
import type { TextStyle } from "./text-style.ts";

export interface ChatOptions {
  conversation?: string | undefined;
  model?: string | undefined;
  json: boolean;
}

export interface ChatDeps {
  client: OpenAI;
  terminal: ChatTerminal;
  stdout: TextSink;
  stderr: TextSink;
  style: TextStyle;
  baseUrl: string;
}

const PROMPT = "you> ";
const EXIT_COMMANDS = new Set(["/exit", "/quit"]);
/** Every later turn would fail the same way: a bad key, a deleted conversation, an unknown model. */
const FATAL_HTTP_STATUSES = new Set([401, 403, 404]);

function isFatal(error: CliErrorReport): boolean {
  return error.httpStatus !== undefined && FATAL_HTTP_STATUSES.has(error.httpStatus);
}

/** An existing id is checked first, so a typo fails before the user types a line, not after. */
async function openConversation(
  client: OpenAI,
  id: string | undefined,
): Promise<{ id: string; created: boolean }> {
  if (id !== undefined) return { id: (await client.conversations.retrieve(id)).id, created: false };
  return { id: (await client.conversations.create({})).id, created: true };
}

function reportTurnAsJson(input: string, conversation: string, outcome: TurnOutcome, stdout: TextSink): void {
  const line: Record<string, unknown> = {
    event: "turn",
    conversation,
    input,
    status: outcome.status,
    text: outcome.text,
  };
  if ("response" in outcome && outcome.response !== undefined) {
    line["response_id"] = outcome.response.id;
    line["usage"] = outcome.response.usage ?? null;
    line["mol"] = outcome.response.mol ?? null;
  }
  if (outcome.status === "failed")
    line["error"] = { message: outcome.error.message, code: outcome.error.code ?? null };
  stdout.write(`${JSON.stringify(line)}\n`);
}

function reportTurnAsText(outcome: TurnOutcome, deps: ChatDeps): void {
  const { stdout, style } = deps;
  if (outcome.text !== "" && !outcome.text.endsWith("\n")) stdout.write("\n");
  if (outcome.status === "cancelled") stdout.write(`${style.dim("── cancelled")}\n`);
  else if (outcome.response !== undefined) stdout.write(`${style.dim(formatStatusLine(outcome.response))}\n`);
  // A blank line between turns; piped transcripts get it too, so turns stay apart there as well.
  stdout.write("\n");
}

/** One turn, streamed to stdout; Ctrl-C meanwhile aborts this request only. */
async function sendTurn(input: string, conversation: string, options: ChatOptions, deps: ChatDeps) {
  const controller = new AbortController();
  const release = deps.terminal.captureInterrupts(() => controller.abort());
  try {
    return await streamTurn(
      deps.client,
      { conversation, input, model: options.model },
      {
        baseUrl: deps.baseUrl,
        signal: controller.signal,
        onDelta: (delta) => {
          if (!options.json) deps.stdout.write(delta);
        },
      },
    );
  } finally {
    release();
  }
}

/**
 * `molmesh chat`: one turn per line until /exit, EOF or a second Ctrl-C at the prompt. A failed turn is
 * reported and the chat goes on (the mesh may recover); the exit code then says that something failed.
 */
export async function runChat(options: ChatOptions, deps: ChatDeps): Promise<number> {
  const { client, terminal, stdout, stderr } = deps;
  try {
    let conversation: { id: string; created: boolean };
    try {
      conversation = await openConversation(client, options.conversation);
    } catch (error) {
      const report = describeCliError(error, deps.baseUrl);
      stderr.write(`molmesh: ${report.message}\n`);
      return report.exitCode;
    }
    if (options.json) {
      stdout.write(
        `${JSON.stringify({ event: "conversation", id: conversation.id, created: conversation.created })}\n`,
      );
    } else {
      const model = options.model ?? "mol";
      stderr.write(
        `conversation ${conversation.id} on ${deps.baseUrl} (model ${model}); /exit or Ctrl-D to leave\n`,
      );
    }

    let failed = false;
    let exitArmed = false;
    for (;;) {
      const input = await terminal.readLine(PROMPT);
      if (input.kind === "eof") break;
      if (input.kind === "interrupt") {
        if (exitArmed) return EXIT_INTERRUPTED;
        exitArmed = true;
        stderr.write("\n(Ctrl-C again to leave, or /exit)\n");
        continue;
      }
      exitArmed = false;
      const text = input.text.trim();
      if (text === "") continue;
      if (EXIT_COMMANDS.has(text)) break;

      if (!terminal.interactive && !options.json) stdout.write(`> ${text}\n`);
      const outcome = await sendTurn(input.text, conversation.id, options, deps);
      if (options.json) reportTurnAsJson(input.text, conversation.id, outcome, stdout);
      else reportTurnAsText(outcome, deps);
      if (outcome.status === "failed") {
        stderr.write(`${deps.style.red(`molmesh: turn failed: ${outcome.error.message}`)}\n`);
        failed = true;
        if (isFatal(outcome.error)) return EXIT_FAILURE;
      }
    }
    return failed ? EXIT_FAILURE : 0;
  } finally {
    terminal.close();
  }
}
