import type { EngineGenerateRequest } from "../engine.ts";
import { buildChoiceGrammar } from "../build-choice-grammar.ts";
import type { OpenAiHttpFlavor } from "./openai-http-engine-options.ts";
import type { AdapterRoute } from "./served-adapter.ts";

export type CompletionBody = Record<string, unknown>;

/**
 * A raw `/v1/completions` request: the adapter's view is the exact prompt, so no chat template applies.
 * vLLM picks the LoRA by `model` and constrains with `structured_outputs`; llama-server picks it with a
 * per-request `lora` list and constrains with a GBNF `grammar`.
 */
export function buildCompletionBody(
  flavor: OpenAiHttpFlavor,
  route: AdapterRoute,
  request: EngineGenerateRequest,
): CompletionBody {
  const body: CompletionBody = {
    model: route.model,
    prompt: request.prompt,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    // molmesh topK 0 means "off": llama.cpp reads 0 that way, vLLM spells it -1 (older releases reject 0).
    top_k: flavor === "vllm" && request.topK <= 0 ? -1 : request.topK,
    stop: [...request.stop],
  };
  if (request.seed !== undefined) body["seed"] = request.seed;
  if (flavor === "vllm") {
    if (request.constraint !== undefined) {
      body["structured_outputs"] = { choice: [...request.constraint.choices] };
    }
    return body;
  }
  body["lora"] = (route.lora ?? []).map((entry) => ({ id: entry.id, scale: entry.scale }));
  body["cache_prompt"] = true;
  if (request.constraint !== undefined) body["grammar"] = buildChoiceGrammar(request.constraint.choices);
  return body;
}
