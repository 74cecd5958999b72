import type { MolWireError, WireErrorCode } from "../../../../schema/wire/v1/index.ts";
import { ApiError, type ApiErrorInit } from "./api-error.ts";

/** Default wait a client is told to take after `overloaded`: nodes shed load in well under a second. */
export const DEFAULT_OVERLOADED_RETRY_AFTER_MS = 1000;

/**
 * 499 ("client closed request", nginx's convention): a cancelled turn almost always means the client left, so
 * nobody reads it; if someone else cancelled it, a 4xx keeps the openai client from retrying (it retries 408).
 */
export const CLIENT_CLOSED_REQUEST_STATUS = 499;

export interface WireErrorMappingOptions {
  /**
   * Sets `x-should-retry`. Pass `false` once the turn is recorded: the openai client retries 5xx without an
   * idempotency key, and a retry would append the user message twice. Defaults to the wire's `retryable`.
   */
  shouldRetry?: boolean;
  /** The request field that a context-length error blames (`input` on /responses, `messages` on chat). */
  param?: string;
  retryAfterMs?: number;
}

type Mapping = Omit<ApiErrorInit, "headers" | "cause">;

/** Server-side failures get fixed public messages: the wire message names nodes and subjects; it stays the cause. */
function describe(code: WireErrorCode, wireMessage: string, options: WireErrorMappingOptions): Mapping {
  const server = (status: number, message: string): Mapping => ({
    status,
    type: "server_error",
    code,
    message,
  });
  switch (code) {
    case "bad_request":
      return { status: 400, type: "invalid_request_error", code, message: wireMessage };
    case "context_length_exceeded":
      return { status: 400, type: "invalid_request_error", code, message: wireMessage, param: options.param };
    case "unknown_adapter":
      return {
        status: 404,
        type: "invalid_request_error",
        code: "model_not_found",
        message: wireMessage,
        param: "model",
      };
    case "cancelled":
      return {
        status: CLIENT_CLOSED_REQUEST_STATUS,
        type: "invalid_request_error",
        code,
        message: "the turn was cancelled",
      };
    case "no_responders":
      return server(503, "no GPU node is available");
    case "overloaded":
      return server(503, "the GPU nodes are overloaded; retry shortly");
    case "deadline_exceeded":
      return server(504, "the GPU node did not answer before the deadline");
    case "engine_failure":
      return server(502, "the GPU node failed while answering");
    case "protocol_error":
      return server(502, "a GPU node sent a malformed reply");
    case "unsupported_version":
      return server(502, "the GPU nodes speak an incompatible wire version");
  }
}

/** Turns a hop failure into what the client sees: status, envelope fields, retry hints. */
export function mapWireErrorToApiError(error: MolWireError, options: WireErrorMappingOptions = {}): ApiError {
  const mapping = describe(error.code, error.message, options);
  const headers: Record<string, string> = {};
  if (error.code === "overloaded") {
    const retryAfterMs = options.retryAfterMs ?? DEFAULT_OVERLOADED_RETRY_AFTER_MS;
    headers["retry-after-ms"] = String(retryAfterMs);
    headers["retry-after"] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }
  if (options.shouldRetry !== undefined || mapping.status >= 500) {
    headers["x-should-retry"] = String(options.shouldRetry ?? error.retryable);
  }
  return new ApiError({ ...mapping, headers, cause: error });
}
