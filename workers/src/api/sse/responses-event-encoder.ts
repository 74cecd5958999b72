import type { TurnRecord, TurnStreamPart } from "../../conversation/turn-record.ts";
import { toPublicError, type ApiError } from "../errors/api-error.ts";
import { formatOutputText } from "../format/format-item.ts";
import {
  formatFunctionCallItem,
  formatResponseObject,
  formatResponseOutputMessage,
  type ResponseFormatOptions,
  type ResponseObject,
} from "../format/format-response-object.ts";
import { describeEarlyEnd, describeSourceFailure, describeTurnError } from "./describe-stream-failure.ts";
import { encodeSseEvent } from "./encode-sse.ts";
import type { PartEncoder } from "./create-part-sse-stream.ts";

const OUTPUT_INDEX = 0;
const CONTENT_INDEX = 0;

/** A function call being streamed: its output index is its call index. */
interface StreamedCall {
  id: string;
  name: string;
  arguments: string;
  done: boolean;
}

/**
 * The Responses API's typed events, in the order the openai client's accumulator requires. Without tools the
 * message item opens with the turn; with tools (choice not `none`) the answer may be text or calls, so the
 * first text delta opens the message, and each call opens its own `function_call` item
 * (`output_item.added`, `function_call_arguments.delta`… `.done`, `output_item.done`).
 */
export class ResponsesEventEncoder implements PartEncoder<TurnStreamPart> {
  #sequence = 0;
  #turn: TurnRecord | undefined;
  #messageOpen = false;
  readonly #calls: StreamedCall[] = [];
  readonly #options: ResponseFormatOptions;
  readonly #startingAfter: number;

  /**
   * `startingAfter` (stream resume): events up to that `sequence_number` are encoded but not sent, so the
   * same parts give the same numbers and a resumed stream continues where the dropped one stopped.
   */
  constructor(options: ResponseFormatOptions & { startingAfter?: number } = {}) {
    const { startingAfter, ...format } = options;
    this.#options = format;
    this.#startingAfter = startingAfter ?? -1;
  }

  #event(type: string, fields: Record<string, unknown>): string {
    const sequence = this.#sequence++;
    if (sequence <= this.#startingAfter) return "";
    return encodeSseEvent(JSON.stringify({ type, sequence_number: sequence, ...fields }), type);
  }

  #response(turn: TurnRecord): ResponseObject {
    return formatResponseObject(turn, this.#options);
  }

  #itemFields(): { item_id: string; output_index: number; content_index: number } {
    return {
      item_id: this.#turn?.assistantItemId ?? "",
      output_index: OUTPUT_INDEX,
      content_index: CONTENT_INDEX,
    };
  }

  #start(turn: TurnRecord): string[] {
    this.#turn = turn;
    // The message arrives through output_item.added, so the opening snapshots carry no output and no usage yet.
    const opening: ResponseObject = {
      ...this.#response({ ...turn, status: "in_progress" }),
      output: [],
      usage: null,
    };
    const mayCall = opening.tools.length > 0 && opening.tool_choice !== "none";
    return [
      this.#event("response.created", { response: opening }),
      this.#event("response.in_progress", { response: opening }),
      ...(mayCall ? [] : this.#openMessage(turn)),
    ];
  }

  #openMessage(turn: TurnRecord): string[] {
    this.#messageOpen = true;
    const item = { ...formatResponseOutputMessage(turn), status: "in_progress", content: [] };
    return [
      this.#event("response.output_item.added", { output_index: OUTPUT_INDEX, item }),
      this.#event("response.content_part.added", { ...this.#itemFields(), part: formatOutputText("") }),
    ];
  }

  #callItem(turn: TurnRecord, index: number, status: "in_progress" | "completed") {
    const call = this.#calls[index] ?? { id: "", name: "", arguments: "" };
    return formatFunctionCallItem(turn, index, call, status);
  }

  #closeCall(turn: TurnRecord, index: number, status: "completed" | "incomplete" = "completed"): string[] {
    const call = this.#calls[index];
    if (!call || call.done) return [];
    call.done = true;
    const item = { ...this.#callItem(turn, index, "completed"), status };
    return [
      this.#event("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: index,
        name: call.name,
        arguments: call.arguments,
      }),
      this.#event("response.output_item.done", { output_index: index, item }),
    ];
  }

  #callDelta(turn: TurnRecord, part: Extract<TurnStreamPart, { type: "tool-call-delta" }>): string[] {
    const frames: string[] = [];
    if (this.#calls[part.index] === undefined) {
      // A new call: the one before it is complete (calls are decoded one after another).
      this.#calls.forEach((_call, index) => frames.push(...this.#closeCall(turn, index)));
      this.#calls[part.index] = { id: part.id, name: part.name, arguments: "", done: false };
      const item = this.#callItem(turn, part.index, "in_progress");
      frames.push(this.#event("response.output_item.added", { output_index: part.index, item }));
    }
    const call = this.#calls[part.index] as StreamedCall;
    call.arguments += part.argumentsDelta;
    if (part.argumentsDelta !== "")
      frames.push(
        this.#event("response.function_call_arguments.delta", {
          item_id: this.#callItem(turn, part.index, "in_progress").id,
          output_index: part.index,
          delta: part.argumentsDelta,
        }),
      );
    return frames;
  }

  /** The calls of a finished turn: the final arguments are the node's checked ones (equal to the deltas). */
  #finishCalls(turn: TurnRecord): string[] {
    const frames: string[] = [];
    (turn.toolCalls ?? []).forEach((call, index) => {
      if (this.#calls[index] === undefined)
        frames.push(
          ...this.#callDelta(turn, { type: "tool-call-delta", index, ...call, argumentsDelta: "" }),
        );
      const streamed = this.#calls[index] as StreamedCall;
      streamed.arguments = call.arguments;
      frames.push(...this.#closeCall(turn, index));
    });
    return frames;
  }

  #finish(turn: TurnRecord): string[] {
    const opening = this.#turn === undefined ? this.#start(turn) : [];
    this.#turn = turn;
    const response = this.#response(turn);
    const terminal = response.status === "incomplete" ? "response.incomplete" : "response.completed";
    if (turn.toolCalls) return [...opening, ...this.#finishCalls(turn), this.#event(terminal, { response })];
    if (this.#calls.length > 0 && !this.#messageOpen) {
      // The token budget cut a call off: it ends `incomplete` with the arguments that streamed (no text came).
      const closing = this.#calls.flatMap((_call, index) => this.#closeCall(turn, index, "incomplete"));
      const output = this.#calls.map((_call, index) => ({
        ...this.#callItem(turn, index, "completed"),
        status: "incomplete" as const,
      }));
      return [...opening, ...closing, this.#event(terminal, { response: { ...response, output } })];
    }
    return [
      ...opening,
      ...(this.#messageOpen ? [] : this.#openMessage(turn)),
      this.#event("response.output_text.done", {
        ...this.#itemFields(),
        text: turn.answerText,
        logprobs: [],
      }),
      this.#event("response.content_part.done", {
        ...this.#itemFields(),
        part: formatOutputText(turn.answerText),
      }),
      this.#event("response.output_item.done", {
        output_index: OUTPUT_INDEX,
        item: formatResponseOutputMessage(turn),
      }),
      this.#event(terminal, { response }),
    ];
  }

  /**
   * `response.failed` needs a response to describe; before turn-start there is none, so an `error` event. Either
   * way the error is the public one the caller mapped, never the turn's stored (node-written) message.
   */
  #fail(error: ApiError, turn = this.#turn): string[] {
    if (turn === undefined) {
      return [this.#event("error", { code: error.code, message: error.message, param: error.param })];
    }
    const opening = this.#turn === undefined ? this.#start(turn) : [];
    const status = turn.status === "cancelled" || error.code === "cancelled" ? "cancelled" : "failed";
    const response = { ...this.#response({ ...turn, status }), error: toPublicError(error) };
    return [...opening, this.#event("response.failed", { response })];
  }

  encodePart(part: TurnStreamPart): { frames: string[]; done: boolean } {
    const { frames, done } = this.#encodePart(part);
    return { frames: frames.filter((frame) => frame !== ""), done };
  }

  #encodePart(part: TurnStreamPart): { frames: string[]; done: boolean } {
    switch (part.type) {
      case "turn-start":
        return { frames: this.#turn === undefined ? this.#start(part.turn) : [], done: false };
      case "text-delta":
        if (this.#turn === undefined) {
          return { frames: this.#fail(describeEarlyEnd()), done: true };
        }
        return {
          frames: [
            ...(this.#messageOpen ? [] : this.#openMessage(this.#turn)),
            this.#event("response.output_text.delta", {
              ...this.#itemFields(),
              delta: part.delta,
              logprobs: [],
            }),
          ],
          done: false,
        };
      case "tool-call-delta":
        if (this.#turn === undefined) return { frames: this.#fail(describeEarlyEnd()), done: true };
        return { frames: this.#callDelta(this.#turn, part), done: false };
      case "turn-finish":
        return { frames: this.#finish(part.turn), done: true };
      case "turn-error":
        return { frames: this.#fail(describeTurnError(part.error), part.turn), done: true };
    }
  }

  encodeEnd(): string[] {
    return this.#fail(describeEarlyEnd()).filter((frame) => frame !== "");
  }

  encodeFailure(error: unknown): string[] {
    return this.#fail(describeSourceFailure(error)).filter((frame) => frame !== "");
  }
}
