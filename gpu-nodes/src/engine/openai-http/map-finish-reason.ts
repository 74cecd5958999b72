import { EngineFailureError, type FinishReason } from "../../../../schema/wire/v1/index.ts";

/** vLLM can also end a stream with `abort` (engine-side cancel, shutdown): that output is not usable. */
export function mapFinishReason(raw: string): FinishReason {
  if (raw === "stop" || raw === "length") return raw;
  throw new EngineFailureError(`engine ended the generation with finish_reason "${raw}"`);
}
