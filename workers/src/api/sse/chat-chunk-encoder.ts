import type { TurnMol, TurnStreamPart } from "../../conversation/turn-record.ts";
import { type ApiError, toErrorEnvelope } from "../errors/api-error.ts";
import { formatChatUsage } from "../format/format-chat-completion.ts";
import { formatMol } from "../format/format-mol.ts";
import { describeEarlyEnd, describeSourceFailure, describeTurnError } from "./describe-stream-failure.ts";
import { SSE_DONE_FRAME, encodeSseEvent } from "./encode-sse.ts";
import type { PartEncoder } from "./create-part-sse-stream.ts";

export interface ChatChunkOptions {
  id: string;
  model: string;
  /** Unix seconds; the same on every chunk. */
  created: number;
  /** `stream_options.include_usage`: every chunk carries `usage: null`, then one chunk with `choices: []`. */
  includeUsage?: boolean;
}

type Delta = {
  role?: "assistant";
  content?: string;
  tool_calls?: Array<{
    index: number;
    id?: string;
    type?: "function";
    function: { name?: string; arguments: string };
  }>;
};

/** `chat.completion.chunk` lines; `mol` rides on the first chunk (the route) and the last ones (the totals). */
export class ChatChunkEncoder implements PartEncoder<TurnStreamPart> {
  #started = false;
  /** Calls whose opening chunk (id, name) went out. */
  readonly #openedCalls = new Set<number>();
  #fingerprint: string | undefined;
  readonly #options: ChatChunkOptions;

  constructor(options: ChatChunkOptions) {
    this.#options = options;
  }

  #chunk(choices: unknown[], extra: Record<string, unknown> = {}): string {
    const { id, created, model, includeUsage } = this.#options;
    const chunk: Record<string, unknown> = { id, object: "chat.completion.chunk", created, model, choices };
    if (this.#fingerprint !== undefined) chunk["system_fingerprint"] = this.#fingerprint;
    if (includeUsage === true) chunk["usage"] = null;
    return encodeSseEvent(JSON.stringify({ ...chunk, ...extra }));
  }

  #choice(delta: Delta, finishReason: "stop" | "length" | "tool_calls" | null = null): unknown {
    return { index: 0, delta, finish_reason: finishReason, logprobs: null };
  }

  #start(mol?: TurnMol): string[] {
    if (this.#started) return [];
    this.#started = true;
    this.#fingerprint = mol?.harnessHash;
    return [
      this.#chunk(
        [this.#choice({ role: "assistant", content: "" })],
        mol === undefined ? {} : { mol: formatMol(mol) },
      ),
    ];
  }

  #fail(error: ApiError): string[] {
    return [encodeSseEvent(JSON.stringify(toErrorEnvelope(error)))];
  }

  encodePart(part: TurnStreamPart): { frames: string[]; done: boolean } {
    switch (part.type) {
      case "turn-start":
        return { frames: this.#start(part.turn.mol), done: false };
      case "text-delta":
        return {
          frames: [...this.#start(), this.#chunk([this.#choice({ content: part.delta })])],
          done: false,
        };
      case "tool-call-delta": {
        // OpenAI's shape: the call's first chunk names it (id, type, name, empty arguments); the rest carry
        // only index and argument fragments.
        const frames = this.#start();
        if (!this.#openedCalls.has(part.index)) {
          this.#openedCalls.add(part.index);
          const opening = { index: part.index, id: part.id, type: "function" as const };
          frames.push(
            this.#chunk([
              this.#choice({ tool_calls: [{ ...opening, function: { name: part.name, arguments: "" } }] }),
            ]),
          );
        }
        if (part.argumentsDelta !== "")
          frames.push(
            this.#chunk([
              this.#choice({
                tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }],
              }),
            ]),
          );
        return { frames, done: false };
      }
      case "turn-finish": {
        const { finishReason } = part.turn;
        const mol = formatMol(part.turn.mol);
        const frames = [
          ...this.#start(mol),
          this.#chunk([this.#choice({}, finishReason ?? "stop")], { mol }),
        ];
        if (this.#options.includeUsage === true)
          frames.push(this.#chunk([], { usage: formatChatUsage(mol), mol }));
        return { frames: [...frames, SSE_DONE_FRAME], done: true };
      }
      case "turn-error":
        return { frames: this.#fail(describeTurnError(part.error)), done: true };
    }
  }

  encodeEnd(): string[] {
    return this.#fail(describeEarlyEnd());
  }

  encodeFailure(error: unknown): string[] {
    return this.#fail(describeSourceFailure(error));
  }
}
