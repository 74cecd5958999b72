import { ApiError } from "./api-error.ts";

// Factories for the errors the HTTP layer raises itself (hop failures go through mapWireErrorToApiError).

export function createInvalidJsonError(): ApiError {
  return new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: "invalid_json",
    message: "We could not parse the JSON body of your request.",
  });
}

export function createUnsupportedMediaTypeError(contentType: string | null): ApiError {
  return new ApiError({
    status: 415,
    type: "invalid_request_error",
    code: "unsupported_media_type",
    message: `Content-Type must be application/json, got ${contentType ?? "none"}.`,
  });
}

export function createPayloadTooLargeError(limitBytes: number): ApiError {
  return new ApiError({
    status: 413,
    type: "invalid_request_error",
    code: "payload_too_large",
    message: `The request body is larger than ${limitBytes} bytes.`,
  });
}

export function createUnauthorizedError(message = "Incorrect or missing API key."): ApiError {
  return new ApiError({ status: 401, type: "invalid_request_error", code: "invalid_api_key", message });
}

/** `resource` is the object type as clients know it: `conversation`, `response`, … */
export function createNotFoundError(resource: string, id: string, param: string | null = null): ApiError {
  return new ApiError({
    status: 404,
    type: "invalid_request_error",
    code: `${resource}_not_found`,
    param,
    message: `No ${resource} found with id '${id}'.`,
  });
}

export function createModelNotFoundError(model: string): ApiError {
  return new ApiError({
    status: 404,
    type: "invalid_request_error",
    code: "model_not_found",
    param: "model",
    message: `The model '${model}' does not exist.`,
  });
}

/** 409 on purpose: the openai client retries 409, and the retry replays the stored result once it is done. */
export function createIdempotencyInFlightError(): ApiError {
  return new ApiError({
    status: 409,
    type: "invalid_request_error",
    code: "idempotency_key_in_use",
    message: "A request with this Idempotency-Key is still in progress; retry once it has finished.",
    headers: { "retry-after": "1" },
  });
}

export function createIdempotencyMismatchError(): ApiError {
  return new ApiError({
    status: 422,
    type: "invalid_request_error",
    code: "idempotency_key_reused",
    message: "This Idempotency-Key was already used with a different request body.",
    headers: { "x-should-retry": "false" },
  });
}

/** 403: the key is valid but was not granted the scope this route needs. */
export function createInsufficientScopeError(scope: string): ApiError {
  return new ApiError({
    status: 403,
    type: "permission_error",
    code: "insufficient_scope",
    message: `This API key does not have the '${scope}' scope.`,
  });
}

export function createInvalidAdminTokenError(): ApiError {
  return new ApiError({
    status: 401,
    type: "invalid_request_error",
    code: "invalid_admin_token",
    message: "Incorrect or missing admin token.",
  });
}

/** 403 rather than 401: the caller is known (a tenant key), it just may not manage tenants. */
export function createAdminTokenRequiredError(): ApiError {
  return new ApiError({
    status: 403,
    type: "permission_error",
    code: "admin_token_required",
    message: "The admin API needs the admin token; tenant API keys cannot use it.",
  });
}

export function createAdminApiDisabledError(): ApiError {
  return new ApiError({
    status: 403,
    type: "permission_error",
    code: "admin_api_disabled",
    message: "The admin API is disabled: the edge has no MOL_ADMIN_TOKEN.",
  });
}

export function createConflictError(code: string, message: string): ApiError {
  return new ApiError({ status: 409, type: "conflict_error", code, message });
}
