import type OpenAI from "openai";
import { z } from "zod";
import { describeCliError, type CliErrorReport } from "./describe-cli-error.ts";
import { parseResponseShape } from "./parse-response-shape.ts";
import { responseSchema, type MeshResponse } from "./response-schema.ts";

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
