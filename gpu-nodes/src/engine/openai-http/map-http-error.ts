import {
  ContextLengthExceededError,
  EngineFailureError,
  OverloadedError,
  UnknownAdapterError,
  type MolWireError,
} from "../../../../schema/wire/v1/index.ts";
import { readErrorBody, type EngineErrorBody } from "./read-error-body.ts";

// vLLM: "This model's maximum context length is …", "… is longer than the maximum model length of …";
// llama-server: "request (N tokens) exceeds the available context size (M tokens)" / exceed_context_size_error.
const CONTEXT_LENGTH_PATTERN =
  /maximum context length|maximum model length|exceeds the available context size|context_length_exceeded|exceed_context_size/i;
// vLLM: "The model `x` does not exist."
const MODEL_NOT_FOUND_PATTERN = /model .* does not exist|NotFoundError|model_not_found/i;

function describe(body: EngineErrorBody): string {
  return [body.message, body.type, typeof body.code === "string" ? body.code : ""].join(" ");
}

/** Maps an engine error (HTTP status, or the `code` of an error sent inside the stream) to a wire error. */
export function mapEngineError(status: number, body: EngineErrorBody): MolWireError {
  const message = `engine answered ${status}: ${body.message}`;
  const text = describe(body);
  if (status >= 400 && status < 500 && CONTEXT_LENGTH_PATTERN.test(text)) {
    return new ContextLengthExceededError(message);
  }
  if (status === 404 || (status === 400 && MODEL_NOT_FOUND_PATTERN.test(text))) {
    return new UnknownAdapterError(message);
  }
  if (status === 429 || status === 503) return new OverloadedError(message);
  // A request the engine rejects as malformed fails the same way on every node: retrying cannot help.
  if (status === 400 || status === 422) return new EngineFailureError(message, { retryable: false });
  return new EngineFailureError(message);
}

export function mapHttpError(status: number, bodyText: string): MolWireError {
  return mapEngineError(status, readErrorBody(bodyText));
}
