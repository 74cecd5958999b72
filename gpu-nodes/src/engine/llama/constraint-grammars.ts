import type { GbnfJsonSchema, Llama, LlamaGrammar } from "node-llama-cpp";
import { canonicalizeJson } from "../../../../schema/harness/content-hash.ts";
import {
  NUMBER_SENTINEL,
  toGbnfJsonSchema,
  type NumberGrammarSpec,
} from "../../../../schema/tools/json-schema-convert.ts";
import type { SubsetSchema } from "../../../../schema/tools/json-schema-subset.ts";
import { TOOL_CALL_MARKER } from "../../../../schema/tools/tool-call-text.ts";
import { EngineFailureError } from "../../../../schema/wire/v2/index.ts";
import { buildChoiceGrammar, type EngineConstraint } from "../engine.ts";

/** Compiled grammars kept per node; schemas come from API callers, so the cache is bounded. */
const MAX_CACHED_GRAMMARS = 64;

/**
 * node-llama-cpp closes a JSON schema grammar with `"\n\n\n\n" [\n]*` and stops on those newlines (a trick for
 * chat sessions); here a JSON value ends where its grammar completes, so that tail is cut and the root renamed.
 */
const JSON_SCHEMA_ROOT = /^root ::= (.*) "\\n\\n\\n\\n" \[\\n\]\*$/m;
const JSON_RULE = "molmesh-json";
/**
 * Its numbers allow exponents of up to 16 digits: `"integer"` then admits `5e-3` (not an integer) and any
 * number `1e999` (Infinity to JSON.parse). Integers lose the exponent, other numbers keep at most two digits.
 */
const LOOSE_EXPONENT = ' ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';
const TIGHT_EXPONENT = " ([eE] [-+]? [0-9]{1,2})?";
/**
 * `auto`: the first character decides. Plain text may not start with `<`; a call starts with the marker. So
 * the model's choice between text and a call is itself decoded under the grammar, and the node knows which
 * one it got from the first character.
 */
const TEXT_RULE = "molmesh-text ::= [^<] [^\\x00]*";

/** Where toGbnfJsonSchema left a bounded number: the GBNF literal of its sentinel const string. */
const NUMBER_SENTINEL_LITERAL = new RegExp(
  `"\\\\"${NUMBER_SENTINEL}(integer|number):(any|nonNegative|positive):(\\d+):([e-])\\\\""`,
  "g",
);

/** `digits` digits at most, no leading zero: `[1-9] [0-9]{0,digits-1}`. */
const leadingDigits = (digits: number): string => (digits > 1 ? `[1-9] [0-9]{0,${digits - 1}}` : "[1-9]");

/** The GBNF of a bounded number (see numberGrammar in schema/tools/json-schema-convert.ts). */
export function numberRule(spec: NumberGrammarSpec): string {
  const fraction = spec.integer ? "" : ' ("." [0-9]{1,16})?';
  const exponent = spec.exponent ? TIGHT_EXPONENT : "";
  if (spec.sign === "positive") {
    const belowOne = spec.integer ? "" : ` | "0" "." [0-9]{0,15} [1-9]`;
    return `(${leadingDigits(spec.digits)}${fraction}${belowOne})${exponent}`;
  }
  const sign = spec.sign === "any" ? '"-"? ' : "";
  return `(${sign}("0" | ${leadingDigits(spec.digits)})${fraction}${exponent})`;
}

function replaceNumberSentinels(grammar: string): string {
  return grammar.replace(
    NUMBER_SENTINEL_LITERAL,
    (_, kind: string, sign: string, digits: string, e: string) =>
      numberRule({
        integer: kind === "integer",
        sign: sign as NumberGrammarSpec["sign"],
        digits: Number(digits),
        exponent: e === "e",
      }),
  );
}

/** node-llama-cpp's GBNF for a schema, made exact (see above), with its root as the rule `molmesh-json`. */
export function tightenJsonSchemaGrammar(grammar: string): string {
  if (!JSON_SCHEMA_ROOT.test(grammar)) {
    throw new EngineFailureError("node-llama-cpp's JSON schema grammar has an unexpected root rule");
  }
  const lines = grammar
    .replace(JSON_SCHEMA_ROOT, `${JSON_RULE} ::= $1`)
    .split("\n")
    // An integer rule is a number rule without a fraction, whatever node-llama-cpp names it.
    .map((line) => line.replace(LOOSE_EXPONENT, line.includes('("."') ? TIGHT_EXPONENT : ""));
  const tightened = replaceNumberSentinels(lines.join("\n"));
  if (/\[eE\] \[-\+\]\?/.test(tightened.replaceAll(TIGHT_EXPONENT, ""))) {
    throw new EngineFailureError(
      "node-llama-cpp's JSON number rules changed; the output grammar would be loose",
    );
  }
  return tightened;
}

/** The whole GBNF for a constraint on JSON: the value alone, or (tools) the tool-call language around it. */
export function composeJsonGrammar(jsonGrammar: string, mode: "json" | "auto" | "required"): string {
  const body = tightenJsonSchemaGrammar(jsonGrammar);
  const call = `${JSON.stringify(TOOL_CALL_MARKER)} ${JSON_RULE}`;
  const root =
    mode === "json"
      ? `root ::= ${JSON_RULE}`
      : mode === "auto"
        ? `root ::= molmesh-text | ${call}\n${TEXT_RULE}`
        : `root ::= ${call}`;
  return `${root}\n${body}`;
}

/** Property names of the wrapper object that carries a format and a call schema through one generation. */
const TEXT_BRANCH = "molmesh-text";
const CALL_BRANCH = "molmesh-call";
const BRANCH_RULES = new RegExp(
  `^${JSON_RULE} ::= .*"\\\\"${TEXT_BRANCH}\\\\"" ":" \\[ \\]\\? ([A-Za-z0-9-]+) .*"\\\\"${CALL_BRANCH}\\\\"" ":" \\[ \\]\\? ([A-Za-z0-9-]+) `,
  "m",
);

/**
 * `tools` (auto) with a JSON format: the answer is the format's JSON or the marker and a call. Both schemas are
 * generated as two properties of one object, so their rules share one namespace; the root then picks the
 * rule of one of them. A JSON value starts with `{`, a call with `<`: the first character decides.
 */
export function composeToolsAndFormatGrammar(wrapperGrammar: string): string {
  const body = tightenJsonSchemaGrammar(wrapperGrammar);
  const match = BRANCH_RULES.exec(body);
  const [, text, call] = match ?? [];
  const defined = (rule: string | undefined): boolean =>
    rule !== undefined && body.split("\n").some((line) => line.startsWith(`${rule} ::= `));
  if (!defined(text) || !defined(call)) {
    throw new EngineFailureError("node-llama-cpp's JSON schema grammar has an unexpected object rule");
  }
  const rules = body.split("\n").filter((line) => !line.startsWith(`${JSON_RULE} ::= `));
  return [`root ::= ${text ?? ""} | ${JSON.stringify(TOOL_CALL_MARKER)} ${call ?? ""}`, ...rules].join("\n");
}

/** The one schema whose generated grammar {@link composeToolsAndFormatGrammar} splits into its two branches. */
export const toolsAndFormatSchema = (textSchema: SubsetSchema, callSchema: SubsetSchema): SubsetSchema => ({
  type: "object",
  properties: { [TEXT_BRANCH]: textSchema, [CALL_BRANCH]: callSchema },
});

/**
 * Turns constraints into llama.cpp grammars, once per distinct constraint (keyed by canonical JSON, so key
 * order in a caller's schema does not matter). Least recently used grammars leave first.
 */
export function createConstraintGrammars(
  llama: Llama,
): (constraint: EngineConstraint) => Promise<LlamaGrammar> {
  const cache = new Map<string, Promise<LlamaGrammar>>();
  async function jsonSchemaGrammar(
    schema: SubsetSchema,
    mode: "json" | "auto" | "required",
  ): Promise<LlamaGrammar> {
    // Compiled once to read its GBNF text; the grammar decoded under is the tightened composition.
    const generated = await llama.createGrammarForJsonSchema<GbnfJsonSchema>(toGbnfJsonSchema(schema));
    return llama.createGrammar({ grammar: composeJsonGrammar(generated.grammar, mode) });
  }

  async function compile(constraint: EngineConstraint): Promise<LlamaGrammar> {
    switch (constraint.type) {
      case "choice":
        return llama.createGrammar({ grammar: buildChoiceGrammar(constraint.choices) });
      case "json_schema":
        return jsonSchemaGrammar(constraint.schema, "json");
      case "json_object":
        return llama.getGrammarFor("json");
      case "grammar":
        return llama.createGrammar({ grammar: constraint.gbnf });
      case "tools": {
        if (constraint.textSchema === undefined || constraint.mode === "required")
          return jsonSchemaGrammar(constraint.callSchema, constraint.mode);
        const wrapper = toolsAndFormatSchema(constraint.textSchema, constraint.callSchema);
        const generated = await llama.createGrammarForJsonSchema<GbnfJsonSchema>(toGbnfJsonSchema(wrapper));
        return llama.createGrammar({ grammar: composeToolsAndFormatGrammar(generated.grammar) });
      }
    }
  }

  return (constraint) => {
    const key = canonicalizeJson(constraint);
    const hit = cache.get(key);
    if (hit) {
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const grammar = compile(constraint).catch((error: unknown) => {
      cache.delete(key);
      throw error instanceof EngineFailureError
        ? error
        : new EngineFailureError(`llama.cpp could not compile the output grammar: ${String(error)}`, {
            cause: error,
          });
    });
    cache.set(key, grammar);
    for (const oldest of cache.keys()) {
      if (cache.size <= MAX_CACHED_GRAMMARS) break;
      cache.delete(oldest);
    }
    return grammar;
  };
}
