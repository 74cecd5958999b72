import type OpenAI from "openai";
import { z } from "zod";
import type { TextSink, ChatTerminal, TextStyle } from "./cli-io.ts";
import { formatStatusLine } from "./format-turns.ts";
import {
  describeCliError,
  type CliErrorReport,
  parseResponseShape,
  responseSchema,
  type MeshResponse,
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
} from "./mesh-client.ts";

export interface TurnRequest {
  conversation: string;
  input: string;
  /** `mol` or `mol:<label>`; absent lets the mesh route (the same as `mol`). */
  model?: string | undefined;
}

export type TurnOutcome =
  | { status: "completed" | "incomplete"; text: string; response: MeshResponse }
  | { status: "failed"; text: string; error: CliErrorReport; response?: MeshResponse }
  | { status: "cancelled"; text: string };

export interface StreamTurnOptions {
  baseUrl: string;
  onDelta: (delta: string) => void;
  /** Aborting cancels the request; the mesh then cancels the answer hop and records the turn as cancelled. */
  signal: AbortSignal;
}

const eventTypeSchema = z.looseObject({ type: z.string() });
const deltaEventSchema = z.looseObject({ delta: z.string() });
const terminalEventSchema = z.looseObject({ response: responseSchema });
const errorEventSchema = z.looseObject({ code: z.string().nullish(), message: z.string() });

/** What one stream event means for the turn; undefined: nothing yet (lifecycle events the CLI has no use for). */
function readEvent(event: unknown, options: StreamTurnOptions, text: string): TurnOutcome | undefined {
  const { type } = parseResponseShape(eventTypeSchema, event, "stream event");
  switch (type) {
    case "response.output_text.delta":
      options.onDelta(parseResponseShape(deltaEventSchema, event, `${type} event`).delta);
      return undefined;
    case "response.completed":
    case "response.incomplete": {
      const { response } = parseResponseShape(terminalEventSchema, event, `${type} event`);
      return { status: type === "response.completed" ? "completed" : "incomplete", text, response };
    }
    case "response.failed": {
      const { response } = parseResponseShape(terminalEventSchema, event, `${type} event`);
      const error: CliErrorReport = { message: response.error?.message ?? "the turn failed", exitCode: 1 };
      if (typeof response.error?.code === "string") error.code = response.error.code;
      return { status: "failed", text, error, response };
    }
    case "error": {
      // Sent when the turn fails before it starts, so there is no response to describe.
      const { code, message } = parseResponseShape(errorEventSchema, event, "error event");
      return {
        status: "failed",
        text,
        error: typeof code === "string" ? { message, exitCode: 1, code } : { message, exitCode: 1 },
      };
    }
    default:
      return undefined;
  }
}

/** Sends one user line as a streamed turn and reports how it ended; never throws for a failed turn. */
export async function streamTurn(
  client: OpenAI,
  request: TurnRequest,
  options: StreamTurnOptions,
): Promise<TurnOutcome> {
  let text = "";
  let outcome: TurnOutcome | undefined;
  try {
    const stream = await client.responses.create(
      {
        conversation: request.conversation,
        input: request.input,
        stream: true,
        ...(request.model === undefined ? {} : { model: request.model }),
      },
      { signal: options.signal },
    );
    const collect: StreamTurnOptions = {
      ...options,
      onDelta: (delta) => {
        text += delta;
        options.onDelta(delta);
      },
    };
    for await (const event of stream) {
      // Read to the end rather than break: breaking aborts the request, and the body is already complete.
      outcome ??= readEvent(event, collect, text);
    }
  } catch (error) {
    if (options.signal.aborted) return { status: "cancelled", text };
    return { status: "failed", text, error: describeCliError(error, options.baseUrl) };
  }
  // The openai stream ends quietly when aborted, so the signal tells a cancel from a cut connection; frames that
  // were already on their way may still have been read, but a finished answer stays finished.
  const finished = outcome?.status === "completed" || outcome?.status === "incomplete";
  if (options.signal.aborted && !finished) return { status: "cancelled", text };
  if (outcome !== undefined) return outcome;
  return {
    status: "failed",
    text,
    error: { message: "the answer stream ended before the turn finished", exitCode: 1, code: "stream_ended" },
  };
}

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
  if ("response" in outcome) {
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
