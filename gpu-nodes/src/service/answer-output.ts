import { randomUUID } from "node:crypto";
import {
  buildToolCallSchema,
  ToolCallTextScanner,
  type ToolSpec,
} from "../../../schema/tools/tool-call-text.ts";
import type { SubsetSchema } from "../../../schema/tools/json-schema-subset.ts";
import { validateJsonValue } from "../../../schema/tools/validate-json-value.ts";
import {
  EngineFailureError,
  type AnswerFinishReason,
  type GenerateConstraint,
  type OutputConstraint,
  type TextDeltaPart,
  type ToolCall,
  type ToolCallDeltaPart,
} from "../../../schema/wire/v2/index.ts";
import type { EngineConstraint, EngineGenerateResult } from "../engine/engine.ts";

type GrammarConstraint = Extract<GenerateConstraint, { type: "grammar" }>;

/** The parts this module emits, before the writer stamps `version` and `seq`. */
export type OutputPartBody =
  Omit<TextDeltaPart, "version" | "seq"> | Omit<ToolCallDeltaPart, "version" | "seq">;

/** What the finish part says about the output, beyond usage and timings. */
export interface AnswerOutcome {
  finishReason: AnswerFinishReason;
  text: string;
  toolCalls?: ToolCall[];
}

/**
 * The node's side of an output constraint: the engine decodes under it, this turns the decoded text into
 * stream parts while it arrives, and checks the whole output at the end. The grammar makes a failed check
 * impossible, so one is an `engine_failure` (retryable elsewhere), never a malformed answer.
 */
export interface AnswerOutput {
  engineConstraint: EngineConstraint | undefined;
  onTextDelta(delta: string): void;
  finish(result: EngineGenerateResult): AnswerOutcome;
}

function toolSpecs(constraint: Extract<OutputConstraint, { type: "tools" }>): ToolSpec[] {
  return constraint.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
  }));
}

function checkJson(text: string, check: (value: unknown) => string | null): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new EngineFailureError(`constrained output is not JSON: ${text.slice(0, 200)}`, { cause });
  }
  const problem = check(value);
  if (problem !== null) throw new EngineFailureError(`constrained output does not validate: ${problem}`);
}

/** A `checkJson` check: where the value breaks `schema`, in words, or null. */
const breaks =
  (schema: SubsetSchema) =>
  (value: unknown): string | null => {
    const issue = validateJsonValue(schema, value);
    return issue && `at "${issue.pointer}": ${issue.message}`;
  };

export function createAnswerOutput(
  constraint: OutputConstraint | GrammarConstraint | undefined,
  emit: (part: OutputPartBody) => void,
): AnswerOutput {
  const emitText = (delta: string): void => {
    emit({ type: "text-delta", delta });
  };
  if (constraint === undefined || constraint.type === "grammar") {
    // A grammar's output is text the engine already held to it: there is nothing left to check.
    return {
      engineConstraint: constraint && { type: "grammar", gbnf: constraint.gbnf },
      onTextDelta: emitText,
      finish: (result) => ({ finishReason: result.finishReason, text: result.text }),
    };
  }
  if (constraint.type === "json_schema" || constraint.type === "json_object") {
    const schema = constraint.type === "json_schema" ? constraint.schema : undefined;
    return {
      engineConstraint: schema ? { type: "json_schema", schema } : { type: "json_object" },
      onTextDelta: emitText,
      finish(result) {
        if (result.finishReason === "stop") {
          checkJson(result.text, (value) => {
            if (schema) return breaks(schema)(value);
            return typeof value === "object" && value !== null && !Array.isArray(value)
              ? null
              : "not an object";
          });
        }
        return { finishReason: result.finishReason, text: result.text };
      },
    };
  }
  const tools = toolSpecs(constraint);
  const scanner = new ToolCallTextScanner();
  const textSchema = constraint.choice === "auto" ? constraint.format?.schema : undefined;
  const ids: string[] = [];
  const idOf = (index: number): string =>
    (ids[index] ??= `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`);
  return {
    engineConstraint: {
      type: "tools",
      callSchema: buildToolCallSchema(tools, constraint.choice, constraint.parallel),
      mode: constraint.choice === "auto" ? "auto" : "required",
      ...(textSchema === undefined ? {} : { textSchema }),
    },
    onTextDelta(delta) {
      for (const event of scanner.push(delta)) {
        if (event.kind === "text") emitText(event.delta);
        else {
          const { index, name, argumentsDelta } = event;
          emit({ type: "tool-call-delta", index, id: idOf(index), name, argumentsDelta });
        }
      }
    },
    finish(result) {
      if (result.finishReason === "length") {
        // A call cut off by the budget is not valid JSON; only its deltas went out, as OpenAI does.
        const partial = scanner.finish(tools, { complete: false });
        return { finishReason: "length", text: partial.kind === "text" ? partial.text : "" };
      }
      let outcome;
      try {
        outcome = scanner.finish(tools);
      } catch (cause) {
        throw new EngineFailureError(`the decoded tool call is malformed: ${String(cause)}`, { cause });
      }
      if (outcome.kind === "text") {
        if (textSchema !== undefined) checkJson(outcome.text, breaks(textSchema));
        return { finishReason: "stop", text: outcome.text };
      }
      const toolCalls = outcome.calls.map((call, index) => ({ id: idOf(index), ...call }));
      return { finishReason: "tool_calls", text: "", toolCalls };
    },
  };
}
