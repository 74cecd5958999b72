import type { GbnfJsonSchema, Llama, LlamaGrammar } from "node-llama-cpp";
import { canonicalizeJson } from "../../../../schema/harness/content-hash.ts";
import { toGbnfJsonSchema } from "../../../../schema/tools/json-schema-convert.ts";
import type { SubsetSchema } from "../../../../schema/tools/json-schema-subset.ts";
import { TOOL_CALL_MARKER } from "../../../../schema/tools/tool-call-text.ts";
import { EngineFailureError } from "../../../../schema/wire/v1/index.ts";
import { buildChoiceGrammar, type EngineConstraint } from "../engine.ts";

/** Compiled grammars kept per node; schemas come from API callers, so the cache is bounded. */
const MAX_CACHED_GRAMMARS = 64;

/**
 * node-llama-cpp closes a JSON schema grammar with `"\n\n\n\n" [\n]*` and stops on those newlines; inside a
 * composed grammar the call ends where its JSON ends, so that tail is cut and the root renamed.
 */
const JSON_SCHEMA_ROOT = /^root ::= (.*) "\\n\\n\\n\\n" \[\\n\]\*$/m;
const CALL_RULE = "molmesh-call";
/**
 * `auto`: the first character decides. Plain text may not start with `<`; a call starts with the marker. So
 * the model's choice between text and a call is itself decoded under the grammar, and the node knows which
 * one it got from the first character.
 */
const TEXT_RULE = "molmesh-text ::= [^<] [^\\x00]*";

function quoteGbnf(text: string): string {
  return JSON.stringify(text);
}

/** GBNF text of the tool-call language for one call schema: marker + call, or (auto) text as well. */
export function composeToolGrammar(callGrammar: string, mode: "auto" | "required"): string {
  if (!JSON_SCHEMA_ROOT.test(callGrammar)) {
    throw new EngineFailureError("node-llama-cpp's JSON schema grammar has an unexpected root rule");
  }
  const body = callGrammar.replace(JSON_SCHEMA_ROOT, `${CALL_RULE} ::= $1`);
  const call = `${quoteGbnf(TOOL_CALL_MARKER)} ${CALL_RULE}`;
  const root = mode === "auto" ? `root ::= molmesh-text | ${call}\n${TEXT_RULE}` : `root ::= ${call}`;
  return `${root}\n${body}`;
}

/**
 * Turns constraints into llama.cpp grammars, once per distinct constraint (keyed by canonical JSON, so key
 * order in a caller's schema does not matter). Least recently used grammars leave first.
 */
export function createConstraintGrammars(
  llama: Llama,
): (constraint: EngineConstraint) => Promise<LlamaGrammar> {
  const cache = new Map<string, Promise<LlamaGrammar>>();
  const jsonSchemaGrammar = (schema: SubsetSchema): Promise<LlamaGrammar> =>
    // The subset's GBNF shape is node-llama-cpp's own schema type, minus its generic $defs parameter.
    llama.createGrammarForJsonSchema<GbnfJsonSchema>(toGbnfJsonSchema(schema));

  async function compile(constraint: EngineConstraint): Promise<LlamaGrammar> {
    switch (constraint.type) {
      case "choice":
        return llama.createGrammar({ grammar: buildChoiceGrammar(constraint.choices) });
      case "json_schema":
        return jsonSchemaGrammar(constraint.schema);
      case "json_object":
        return llama.getGrammarFor("json");
      case "tools": {
        const call = await jsonSchemaGrammar(constraint.callSchema);
        return llama.createGrammar({ grammar: composeToolGrammar(call.grammar, constraint.mode) });
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
