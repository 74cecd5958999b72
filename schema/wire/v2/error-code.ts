import { z } from "zod";

/** Error codes travel as data; each side rebuilds them into typed errors (see wire-error.ts). */
export const WIRE_ERROR_CODES = [
  "bad_request",
  "unsupported_version",
  "unknown_adapter",
  "context_length_exceeded",
  "overloaded",
  "deadline_exceeded",
  "cancelled",
  "engine_failure",
  "no_responders",
  "protocol_error",
  /** A turn's step program stopped at its step, token or time limit before it had an answer (edge-side only). */
  "budget_exceeded",
] as const;
export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number];
export const wireErrorCodeSchema = z.enum(WIRE_ERROR_CODES);

/** Codes where the same request may succeed on another node (or later) without changing it. */
export const RETRYABLE_ERROR_CODES: ReadonlySet<WireErrorCode> = new Set([
  "overloaded",
  "engine_failure",
  "no_responders",
]);

export const wireErrorPayloadSchema = z.object({
  code: wireErrorCodeSchema,
  message: z.string().max(2000),
  retryable: z.boolean(),
  /** With `overloaded`: how long the node expects its queue to need before a retry would be taken. */
  retryAfterMs: z.int().nonnegative().max(3_600_000).optional(),
});
export type WireErrorPayload = z.infer<typeof wireErrorPayloadSchema>;
