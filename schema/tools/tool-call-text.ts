import type { JsonValue, SubsetSchema } from "./json-schema-subset.ts";
import { validateJsonValue } from "./validate-json-value.ts";

/**
 * How a specialist's decoded text carries function calls. The answer is either plain text, or the marker
 * followed by one call object `{"name": …, "arguments": {…}}` (a JSON array of them when parallel calls are
 * allowed): the Hermes/Qwen `<tool_call>` convention most open chat models were tuned on. Engines constrain
 * the text to exactly that language (see gpu-nodes' tool grammar), so the node can split it while streaming.
 */
export const TOOL_CALL_MARKER = "<tool_call>";
/** Most calls one answer may make when parallel calls are on. */
export const MAX_PARALLEL_TOOL_CALLS = 8;

export interface ToolSpec {
  name: string;
  description?: string | undefined;
  parameters: SubsetSchema;
}

export type ToolChoice = "auto" | "required" | { name: string };

/**
 * The schema of what follows the marker: a call of one of `tools` (only the named one when `choice` names
 * it). Properties in this order, so `name` is always decoded before `arguments` and a stream can say which
 * function the arguments belong to.
 */
export function buildToolCallSchema(
  tools: readonly ToolSpec[],
  choice: ToolChoice,
  parallel: boolean,
): SubsetSchema {
  const allowed = typeof choice === "object" ? tools.filter((tool) => tool.name === choice.name) : tools;
  if (allowed.length === 0) throw new RangeError("tool choice names no tool of the list");
  const calls: SubsetSchema[] = allowed.map((tool) => ({
    type: "object",
    properties: { name: { const: tool.name }, arguments: tool.parameters },
  }));
  const call: SubsetSchema = calls.length === 1 ? (calls[0] as SubsetSchema) : { anyOf: calls };
  return parallel ? { type: "array", items: call, minItems: 1, maxItems: MAX_PARALLEL_TOOL_CALLS } : call;
}

/** What one chunk of decoded text means, in order. */
export type ToolTextEvent =
  { kind: "text"; delta: string } | { kind: "call"; index: number; name: string; argumentsDelta: string };

export interface DecodedToolCall {
  name: string;
  /** The arguments exactly as decoded (JSON text): the concatenation of that call's deltas. */
  arguments: string;
}

export type ToolTextOutcome = { kind: "text"; text: string } | { kind: "calls"; calls: DecodedToolCall[] };

/** The value of a JSON string's raw contents; raw text when it does not decode (finish() then refuses it). */
function decodeJsonString(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

interface CallProgress {
  name: string;
  arguments: string;
}

/**
 * Splits streamed text into plain text or call argument deltas. Text that might still become the marker is
 * held back until it either is the marker or cannot be; after the marker, a JSON scanner (depth, strings)
 * finds each call's `name` and the exact span of its `arguments` object.
 */
export class ToolCallTextScanner {
  #mode: "undecided" | "text" | "calls" = "undecided";
  #held = "";
  #text = "";
  #callText = "";
  readonly #calls: CallProgress[] = [];
  // JSON scanner state over the text after the marker.
  #depth = 0;
  #elementDepth: number | undefined;
  #inString = false;
  #escaped = false;
  #string = "";
  #lastString = "";
  #key = "";
  #argsDepth: number | undefined;

  /** Feeds one decoded chunk; returns what it means, in order. */
  push(chunk: string): ToolTextEvent[] {
    if (this.#mode === "text") return this.#emitText(chunk);
    if (this.#mode === "undecided") {
      this.#held += chunk;
      if (this.#held.startsWith(TOOL_CALL_MARKER)) {
        this.#mode = "calls";
        chunk = this.#held.slice(TOOL_CALL_MARKER.length);
        this.#held = "";
      } else if (TOOL_CALL_MARKER.startsWith(this.#held)) {
        return [];
      } else {
        this.#mode = "text";
        const held = this.#held;
        this.#held = "";
        return this.#emitText(held);
      }
    }
    return this.#scanCalls(chunk);
  }

  #emitText(delta: string): ToolTextEvent[] {
    this.#text += delta;
    return delta.length > 0 ? [{ kind: "text", delta }] : [];
  }

  #scanCalls(chunk: string): ToolTextEvent[] {
    this.#callText += chunk;
    const deltas = new Map<number, string>();
    for (const char of chunk) {
      const before = this.#depth;
      this.#scanChar(char);
      const current = this.#calls.length - 1;
      const inArgs =
        this.#argsDepth !== undefined && (before >= this.#argsDepth || this.#depth >= this.#argsDepth);
      if (inArgs && current >= 0) {
        (this.#calls[current] as CallProgress).arguments += char;
        deltas.set(current, (deltas.get(current) ?? "") + char);
      }
      if (this.#argsDepth !== undefined && this.#depth < this.#argsDepth) this.#argsDepth = undefined;
    }
    return [...deltas].map(([index, argumentsDelta]) => ({
      kind: "call" as const,
      index,
      name: this.#calls[index]?.name ?? "",
      argumentsDelta,
    }));
  }

  #scanChar(char: string): void {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (char === "\\") this.#escaped = true;
      else if (char === '"') {
        this.#inString = false;
        this.#lastString = decodeJsonString(this.#string);
        if (this.#depth === this.#elementDepth && this.#key === "name" && this.#argsDepth === undefined) {
          const call = this.#calls.at(-1);
          if (call) call.name = this.#lastString;
        }
        return;
      }
      this.#string += char;
      return;
    }
    if (char === '"') {
      this.#inString = true;
      this.#string = "";
    } else if (char === ":" && this.#depth === this.#elementDepth) {
      this.#key = this.#lastString;
    } else if (char === "," && this.#depth === this.#elementDepth) {
      this.#key = "";
    } else if (char === "{" || char === "[") {
      if (this.#elementDepth === undefined) this.#elementDepth = char === "[" ? 2 : 1;
      this.#depth += 1;
      if (char === "{" && this.#depth === this.#elementDepth) {
        this.#calls.push({ name: "", arguments: "" });
        this.#key = "";
      } else if (this.#depth === this.#elementDepth + 1 && this.#key === "arguments") {
        this.#argsDepth = this.#depth;
      }
    } else if (char === "}" || char === "]") {
      this.#depth -= 1;
    }
  }

  /**
   * The whole answer, once decoding ended: plain text, or the calls, each checked against its tool's schema.
   * Throws a RangeError when the text is not a valid call (which a grammar-constrained engine never sends).
   * With `complete: false` (decoding was cut off) it returns what was scanned, unchecked.
   */
  finish(tools: readonly ToolSpec[], options: { complete?: boolean } = {}): ToolTextOutcome {
    if (this.#mode !== "calls") return { kind: "text", text: this.#text + this.#held };
    if (options.complete === false) return { kind: "calls", calls: [...this.#calls] };
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.#callText);
    } catch (cause) {
      throw new RangeError(`tool call is not valid JSON: ${this.#callText.slice(0, 200)}`, { cause });
    }
    const items = Array.isArray(parsed) ? parsed : [parsed];
    if (items.length !== this.#calls.length) throw new RangeError("tool call list does not match the scan");
    const calls = items.map((item: unknown, i): DecodedToolCall => {
      const progress = this.#calls[i] as CallProgress;
      const record = (typeof item === "object" && item !== null ? item : {}) as Record<string, JsonValue>;
      const tool = tools.find((candidate) => candidate.name === record["name"]);
      if (!tool || tool.name !== progress.name) throw new RangeError(`tool call ${i} names no known tool`);
      const issue = validateJsonValue(tool.parameters, record["arguments"]);
      if (issue)
        throw new RangeError(
          `tool call ${i} (${tool.name}) arguments at "${issue.pointer}": ${issue.message}`,
        );
      return { name: tool.name, arguments: progress.arguments };
    });
    return { kind: "calls", calls };
  }
}
