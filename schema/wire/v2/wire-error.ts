import { RETRYABLE_ERROR_CODES, type WireErrorCode, type WireErrorPayload } from "./error-code.ts";

const MAX_MESSAGE_CHARS = 2000;

/** Base of every error that can cross the edge↔node wire; `code` is the data that travels. */
export class MolWireError extends Error {
  override name = "MolWireError";
  readonly code: WireErrorCode;
  readonly retryable: boolean;
  /** A hint to wait before retrying (a node's queue was full); travels with the payload when set. */
  readonly retryAfterMs: number | undefined;

  constructor(code: WireErrorCode, message: string, options?: ErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options?.retryable ?? RETRYABLE_ERROR_CODES.has(code);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

type ErrorOptions = { cause?: unknown; retryable?: boolean; retryAfterMs?: number | undefined };

export class BadRequestError extends MolWireError {
  override name = "BadRequestError";
  constructor(message: string, options?: ErrorOptions) {
    super("bad_request", message, options);
  }
}
export class UnsupportedVersionError extends MolWireError {
  override name = "UnsupportedVersionError";
  constructor(message: string, options?: ErrorOptions) {
    super("unsupported_version", message, options);
  }
}
export class UnknownAdapterError extends MolWireError {
  override name = "UnknownAdapterError";
  constructor(message: string, options?: ErrorOptions) {
    super("unknown_adapter", message, options);
  }
}
export class ContextLengthExceededError extends MolWireError {
  override name = "ContextLengthExceededError";
  constructor(message: string, options?: ErrorOptions) {
    super("context_length_exceeded", message, options);
  }
}
export class OverloadedError extends MolWireError {
  override name = "OverloadedError";
  constructor(message: string, options?: ErrorOptions) {
    super("overloaded", message, options);
  }
}
export class DeadlineExceededError extends MolWireError {
  override name = "DeadlineExceededError";
  constructor(message: string, options?: ErrorOptions) {
    super("deadline_exceeded", message, options);
  }
}
export class CancelledError extends MolWireError {
  override name = "CancelledError";
  constructor(message: string, options?: ErrorOptions) {
    super("cancelled", message, options);
  }
}
export class EngineFailureError extends MolWireError {
  override name = "EngineFailureError";
  constructor(message: string, options?: ErrorOptions) {
    super("engine_failure", message, options);
  }
}
export class NoRespondersError extends MolWireError {
  override name = "NoRespondersError";
  constructor(message: string, options?: ErrorOptions) {
    super("no_responders", message, options);
  }
}
export class ProtocolError extends MolWireError {
  override name = "ProtocolError";
  constructor(message: string, options?: ErrorOptions) {
    super("protocol_error", message, options);
  }
}

export class BudgetExceededError extends MolWireError {
  override name = "BudgetExceededError";
  constructor(message: string, options?: ErrorOptions) {
    super("budget_exceeded", message, options);
  }
}

const ERROR_CLASSES: Record<WireErrorCode, new (message: string, options?: ErrorOptions) => MolWireError> = {
  bad_request: BadRequestError,
  unsupported_version: UnsupportedVersionError,
  unknown_adapter: UnknownAdapterError,
  context_length_exceeded: ContextLengthExceededError,
  overloaded: OverloadedError,
  deadline_exceeded: DeadlineExceededError,
  cancelled: CancelledError,
  engine_failure: EngineFailureError,
  no_responders: NoRespondersError,
  protocol_error: ProtocolError,
  budget_exceeded: BudgetExceededError,
};

/** Turns any thrown value into the payload that travels; unknown errors become `engine_failure`. */
export function toWireErrorPayload(error: unknown): WireErrorPayload {
  const wire =
    error instanceof MolWireError
      ? error
      : new EngineFailureError(error instanceof Error ? error.message : String(error), { cause: error });
  const payload = {
    code: wire.code,
    message: wire.message.slice(0, MAX_MESSAGE_CHARS),
    retryable: wire.retryable,
  };
  return wire.retryAfterMs === undefined
    ? payload
    : { ...payload, retryAfterMs: Math.round(wire.retryAfterMs) };
}

/** Rebuilds the typed error on the receiving side, so callers can branch with `instanceof`. */
export function rebuildWireError(payload: WireErrorPayload, cause?: unknown): MolWireError {
  const ErrorClass = ERROR_CLASSES[payload.code];
  return new ErrorClass(payload.message, {
    cause,
    retryable: payload.retryable,
    ...(payload.retryAfterMs === undefined ? {} : { retryAfterMs: payload.retryAfterMs }),
  });
}
