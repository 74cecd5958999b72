import type { ApiError } from "./api-error.ts";

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string };
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
