import { MolWireError, rebuildWireError, type WireErrorCode } from "../../../../schema/wire/v2/index.ts";

/** OpenAI-style error `type`s; clients branch on `code`, humans read `message`. */
export const API_ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "conflict_error",
  "rate_limit_error",
  "insufficient_quota",
  "server_error",
] as const;
export type ApiErrorType = (typeof API_ERROR_TYPES)[number];

/** The objects a client can name by id; a missing one is `<resource>_not_found`. */
export type ApiResource =
  | "conversation"
  | "response"
  | "item"
  | "tenant"
  | "api_key"
  | "webhook_endpoint"
  | "webhook_delivery"
  | "genui_component"
  | "harness"
  | "harness_label";

/** A hop failure as clients see it: the wire code, except an unknown adapter, which is a model to them. */
export type PublicWireErrorCode = Exclude<WireErrorCode, "unknown_adapter"> | "model_not_found";

/** Every `code` the edge sends: the request's shape, who is asking, limits, conflicts, hops, inbound webhooks. */
export type ApiErrorCode =
  // The request itself (body, headers, route).
  | "invalid_json"
  | "unsupported_media_type"
  | "payload_too_large"
  | "invalid_value"
  | "invalid_type"
  | "missing_required_parameter"
  | "unknown_parameter"
  | "invalid_webhook_url"
  | "not_found"
  | "method_not_allowed"
  | `${ApiResource}_not_found`
  // Who is asking and what they may do.
  | "invalid_api_key"
  | "invalid_admin_token"
  | "insufficient_scope"
  | "admin_token_required"
  | "admin_api_disabled"
  // Limits.
  | "rate_limit_exceeded"
  | "insufficient_quota"
  // Conflicts with what is stored.
  | "idempotency_key_in_use"
  | "idempotency_key_reused"
  | "api_key_not_rotatable"
  | "webhook_endpoint_disabled"
  | "response_in_progress"
  // GenUI components: a rejected one carries its validation report; the sandbox origin must be configured.
  | "genui_component_rejected"
  | "genui_sandbox_unconfigured"
  | "duplicate_delivery"
  // Inbound webhooks (signature and payload).
  | "missing_signature"
  | "invalid_signature"
  | "stale_timestamp"
  | "missing_thread_key"
  | "missing_text"
  // Hops, and anything else that went wrong inside.
  | PublicWireErrorCode
  | "internal_error";

export interface ApiErrorInit {
  status: number;
  type: ApiErrorType;
  code: ApiErrorCode;
  message: string;
  param?: string | null | undefined;
  /** Sent with the error response, e.g. `retry-after` or `x-should-retry`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error the edge answers with: the HTTP status, the envelope fields and any headers that go with it. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly type: ApiErrorType;
  readonly code: ApiErrorCode;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers ?? {};
  }
}

export interface ErrorEnvelope {
  error: { message: string; type: ApiErrorType; param: string | null; code: ApiErrorCode };
}

/** The body every error response and every mid-stream chat error carries. */
export function toErrorEnvelope(error: ApiError): ErrorEnvelope {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

/** A complete JSON error response, so handlers need not know Hono's status-code union (499 is not in it). */
export function toErrorResponse(error: ApiError, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(toErrorEnvelope(error)), {
    status: error.status,
    headers: { "content-type": "application/json", ...error.headers, ...headers },
  });
}

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
  param?: string | undefined;
  retryAfterMs?: number;
}

type Mapping = Omit<ApiErrorInit, "headers" | "cause">;

/** Server-side failures get fixed public messages: the wire message names nodes and subjects; it stays the cause. */
function describe(code: WireErrorCode, wireMessage: string, options: WireErrorMappingOptions): Mapping {
  const server = (serverCode: PublicWireErrorCode, status: number, message: string): Mapping => ({
    status,
    type: "server_error",
    code: serverCode,
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
      return server(code, 503, "no GPU node is available");
    case "overloaded":
      return server(code, 503, "the GPU nodes are overloaded; retry shortly");
    case "deadline_exceeded":
      return server(code, 504, "the GPU node did not answer before the deadline");
    case "engine_failure":
      return server(code, 502, "the GPU node failed while answering");
    case "protocol_error":
      return server(code, 502, "a GPU node sent a malformed reply");
    case "unsupported_version":
      return server(code, 502, "the GPU nodes speak an incompatible wire version");
    case "budget_exceeded":
      return server(code, 500, "the turn's program stopped at its limit before it had an answer");
  }
}

/** Turns a hop failure into what the client sees: status, envelope fields, retry hints. */
export function mapWireErrorToApiError(error: MolWireError, options: WireErrorMappingOptions = {}): ApiError {
  const mapping = describe(error.code, error.message, options);
  const headers: Record<string, string> = {};
  if (error.code === "overloaded") {
    // The node's own estimate (its queue ahead, drained at its pace) beats a fixed guess.
    const retryAfterMs = options.retryAfterMs ?? error.retryAfterMs ?? DEFAULT_OVERLOADED_RETRY_AFTER_MS;
    headers["retry-after-ms"] = String(retryAfterMs);
    headers["retry-after"] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }
  if (options.shouldRetry !== undefined || mapping.status >= 500) {
    headers["x-should-retry"] = String(options.shouldRetry ?? error.retryable);
  }
  return new ApiError({ ...mapping, headers, cause: error });
}

/** A turn's error as the conversation stores and streams it: the wire code and the node's own message. */
export interface TurnError {
  code: WireErrorCode;
  message: string;
  /** A node's `retryAfterMs` with `overloaded`, while the turn is live (stored turns do not keep it). */
  retryAfterMs?: number | undefined;
}

/** What a client may read of a failure, in a Response's `error`, a stream event or a chat chunk. */
export interface PublicError {
  code: ApiErrorCode;
  message: string;
}

/**
 * The one way a turn's stored error reaches a client: through the same mapping as a hop failure over HTTP, so
 * the node's message (subjects, node ids) stays inside and only the public code and message go out.
 */
export function mapTurnErrorToApiError(error: TurnError): ApiError {
  const { retryAfterMs, ...stored } = error;
  return mapWireErrorToApiError(
    rebuildWireError({
      ...stored,
      retryable: false,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    }),
  );
}

/** The `{ code, message }` pair a Response's `error` and the stream events carry. */
export function toPublicError(error: ApiError): PublicError {
  return { code: error.code, message: error.message };
}

/** The last line of an error handler: anything thrown becomes an ApiError; unknown failures say nothing inside. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof MolWireError) return mapWireErrorToApiError(error);
  return new ApiError({
    status: 500,
    type: "server_error",
    code: "internal_error",
    message: "the server had an error while processing the request",
    cause: error,
  });
}
