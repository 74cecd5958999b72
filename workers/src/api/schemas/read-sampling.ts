import type { SamplingInput } from "../../../../schema/wire/v2/index.ts";
import type { ChatCompletionBody } from "./create-chat-completion-body-schema.ts";
import type { CreateResponseBody } from "./create-response-body-schema.ts";

/** Only what the client set: the harness's own defaults fill the rest. */
function definedOnly(sampling: Partial<SamplingInput>): Partial<SamplingInput> {
  return Object.fromEntries(Object.entries(sampling).filter(([, value]) => value !== undefined));
}

export function readResponseSampling(body: CreateResponseBody): Partial<SamplingInput> {
  return definedOnly({ temperature: body.temperature, topP: body.top_p, maxTokens: body.max_output_tokens });
}

export function readChatSampling(body: ChatCompletionBody): Partial<SamplingInput> {
  return definedOnly({
    temperature: body.temperature,
    topP: body.top_p,
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    seed: body.seed,
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
  });
}
