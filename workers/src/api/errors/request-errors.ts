import type { z } from "zod";
import { ApiError, type ApiErrorCode, type ApiResource } from "./api-error.ts";

// The errors the HTTP layer raises itself (hop failures go through mapWireErrorToApiError): the request's
// shape, who is asking, what is stored.

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

/** 405 for a path the API serves, with a method it does not serve there; the `Allow` header lists those it does. */
export function createMethodNotAllowedError(
  method: string,
  path: string,
  allowed: readonly string[],
): ApiError {
  return new ApiError({
    status: 405,
    type: "invalid_request_error",
    code: "method_not_allowed",
    message: `Invalid method for URL (${method} ${path}).`,
    headers: { allow: allowed.join(", ") },
  });
}

export function createUnauthorizedError(message = "Incorrect or missing API key."): ApiError {
  return new ApiError({ status: 401, type: "invalid_request_error", code: "invalid_api_key", message });
}

/** `resource` is the object type as clients know it: `conversation`, `response`, … */
export function createNotFoundError(
  resource: ApiResource,
  id: string,
  param: string | null = null,
): ApiError {
  return new ApiError({
    status: 404,
    type: "invalid_request_error",
    code: `${resource}_not_found`,
    param,
    message: `No ${resource} found with id '${id}'.`,
  });
}

/** 413 for a harness document past the registry's cap, measured as canonical JSON (the body may be larger). */
export function createHarnessTooLargeError(bytes: number, limitBytes: number): ApiError {
  return new ApiError({
    status: 413,
    type: "invalid_request_error",
    code: "payload_too_large",
    param: "document",
    message: `The harness document is ${bytes} bytes of canonical JSON; at most ${limitBytes} are stored.`,
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

export function createConflictError(code: ApiErrorCode, message: string): ApiError {
  return new ApiError({ status: 409, type: "conflict_error", code, message });
}

type Issue = z.core.$ZodIssue;

/** OpenAI writes paths as `messages[0].content`; so do we, so client code that reads `param` keeps working. */
export function formatParamPath(path: readonly PropertyKey[]): string | null {
  let param = "";
  for (const key of path) {
    if (typeof key === "number") param += `[${key}]`;
    else param += param === "" ? String(key) : `.${String(key)}`;
  }
  return param === "" ? null : param;
}

function codeOf(issue: Issue): ApiErrorCode {
  if (issue.code === "unrecognized_keys") return "unknown_parameter";
  if (issue.code === "invalid_type") {
    return issue.message.endsWith("received undefined") ? "missing_required_parameter" : "invalid_type";
  }
  return "invalid_value";
}

/**
 * A union (`string | parts[]`) reports every branch. The branch the value had the right type for says what is
 * actually wrong, deeper down; if no branch took the type, name the types that would have been accepted.
 */
function unwrapUnion(issue: Issue): Issue {
  if (issue.code !== "invalid_union") return issue;
  const typeMismatch = (branch: readonly Issue[]) =>
    branch.every((inner) => inner.code === "invalid_type" && inner.path.length === 0);
  const branch = issue.errors.find((candidate) => candidate.length > 0 && !typeMismatch(candidate));
  const inner = branch?.[0];
  if (inner === undefined) {
    const expected = issue.errors.flatMap((candidate) =>
      candidate.flatMap((inner) => (inner.code === "invalid_type" ? [inner.expected] : [])),
    );
    return expected.length === 0
      ? issue
      : { ...issue, message: `Invalid input: expected ${expected.join(" or ")}` };
  }
  return unwrapUnion({ ...inner, path: [...issue.path, ...inner.path] });
}

/** A 400 that blames the first failing field; the other issues follow in the message, so one round trip shows all. */
export function createValidationError(issues: readonly Issue[]): ApiError {
  const [outer, ...rest] = issues;
  if (outer === undefined) {
    return new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_value",
      message: "invalid request",
    });
  }
  const first = unwrapUnion(outer);
  const path = first.code === "unrecognized_keys" ? [...first.path, ...first.keys.slice(0, 1)] : first.path;
  const param = formatParamPath(path);
  const headline =
    first.code === "unrecognized_keys"
      ? `Unrecognized request argument supplied: ${first.keys.join(", ")}`
      : param === null
        ? first.message
        : `Invalid '${param}': ${first.message}`;
  const more = rest.length === 0 ? "" : ` (and ${rest.length} more issue${rest.length === 1 ? "" : "s"})`;
  return new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: codeOf(first),
    param,
    message: headline + more,
  });
}
