import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  MolWireError,
  WIRE_ERROR_CODES,
  rebuildWireError,
  type WireErrorCode,
} from "../../schema/wire/v2/index.ts";
import {
  ApiError,
  mapWireErrorToApiError,
  toApiError,
  toErrorEnvelope,
  toErrorResponse,
} from "../../workers/src/api/errors/api-error.ts";
import {
  createValidationError,
  formatParamPath,
  createIdempotencyInFlightError,
  createIdempotencyMismatchError,
  createInvalidJsonError,
  createNotFoundError,
  createPayloadTooLargeError,
  createUnauthorizedError,
  createUnsupportedMediaTypeError,
} from "../../workers/src/api/errors/request-errors.ts";

const wire = (code: WireErrorCode, message = `node said ${code}`) =>
  rebuildWireError({
    code,
    message,
    retryable: code === "overloaded" || code === "engine_failure" || code === "no_responders",
  });

describe("error envelope", () => {
  it("carries exactly message, type, param and code", () => {
    const error = new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_value",
      message: "bad",
      param: "input",
    });
    expect(toErrorEnvelope(error)).toStrictEqual({
      error: { message: "bad", type: "invalid_request_error", param: "input", code: "invalid_value" },
    });
  });

  it("builds a JSON response with the status and the error's headers", async () => {
    const response = toErrorResponse(mapWireErrorToApiError(wire("overloaded")), { "x-request-id": "req_1" });
    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("retry-after-ms")).toBe("1000");
    expect(response.headers.get("x-request-id")).toBe("req_1");
    expect(await response.json()).toMatchObject({ error: { code: "overloaded", type: "server_error" } });
  });
});

describe("mapWireErrorToApiError", () => {
  const expected: Record<WireErrorCode, [status: number, code: string]> = {
    bad_request: [400, "bad_request"],
    context_length_exceeded: [400, "context_length_exceeded"],
    unknown_adapter: [404, "model_not_found"],
    cancelled: [499, "cancelled"],
    no_responders: [503, "no_responders"],
    overloaded: [503, "overloaded"],
    deadline_exceeded: [504, "deadline_exceeded"],
    engine_failure: [502, "engine_failure"],
    protocol_error: [502, "protocol_error"],
    unsupported_version: [502, "unsupported_version"],
    budget_exceeded: [500, "budget_exceeded"],
  };

  it.each(WIRE_ERROR_CODES)("maps %s", (code) => {
    const error = mapWireErrorToApiError(wire(code));
    expect([error.status, error.code]).toEqual(expected[code]);
    expect(error.cause).toBeInstanceOf(MolWireError);
    expect(error.type).toBe(error.status >= 500 ? "server_error" : "invalid_request_error");
  });

  it("keeps client-facing messages and hides node internals on server errors", () => {
    expect(mapWireErrorToApiError(wire("context_length_exceeded", "4200 > 4096 tokens")).message).toBe(
      "4200 > 4096 tokens",
    );
    expect(
      mapWireErrorToApiError(wire("no_responders", "no GPU node is serving molmesh.v1.hop.answer")).message,
    ).toBe("no GPU node is available");
  });

  it("blames the given param for context length and `model` for an unknown adapter", () => {
    expect(mapWireErrorToApiError(wire("context_length_exceeded"), { param: "input" }).param).toBe("input");
    expect(mapWireErrorToApiError(wire("unknown_adapter")).param).toBe("model");
  });

  it("tells the client whether to retry: the wire's verdict unless the turn is already recorded", () => {
    expect(mapWireErrorToApiError(wire("engine_failure")).headers["x-should-retry"]).toBe("true");
    expect(mapWireErrorToApiError(wire("deadline_exceeded")).headers["x-should-retry"]).toBe("false");
    expect(
      mapWireErrorToApiError(wire("engine_failure"), { shouldRetry: false }).headers["x-should-retry"],
    ).toBe("false");
    expect(mapWireErrorToApiError(wire("bad_request")).headers["x-should-retry"]).toBeUndefined();
    expect(mapWireErrorToApiError(wire("overloaded"), { retryAfterMs: 2500 }).headers).toMatchObject({
      "retry-after": "3",
      "retry-after-ms": "2500",
    });
  });
});

describe("request errors", () => {
  it.each([
    [createInvalidJsonError(), 400, "invalid_json"],
    [createUnsupportedMediaTypeError("text/plain"), 415, "unsupported_media_type"],
    [createPayloadTooLargeError(1024), 413, "payload_too_large"],
    [createUnauthorizedError(), 401, "invalid_api_key"],
    [createNotFoundError("conversation", "conv_x"), 404, "conversation_not_found"],
    [createIdempotencyInFlightError(), 409, "idempotency_key_in_use"],
    [createIdempotencyMismatchError(), 422, "idempotency_key_reused"],
  ])("%o", (error, status, code) => {
    expect(error).toBeInstanceOf(ApiError);
    expect([error.status, error.code]).toEqual([status, code]);
  });

  it("turns anything else into a 500 that says nothing inside", () => {
    const error = toApiError(new Error("db password is hunter2"));
    expect([error.status, error.code]).toEqual([500, "internal_error"]);
    expect(error.message).not.toContain("hunter2");
    expect(toApiError(wire("overloaded")).status).toBe(503);
    const own = createInvalidJsonError();
    expect(toApiError(own)).toBe(own);
  });
});

describe("validation errors", () => {
  const schema = z.strictObject({
    messages: z.array(z.strictObject({ content: z.string() })),
    n: z.number(),
  });

  it("formats paths the way OpenAI does", () => {
    expect(formatParamPath(["messages", 0, "content"])).toBe("messages[0].content");
    expect(formatParamPath([])).toBeNull();
  });

  it("blames the first failing field", () => {
    const result = schema.safeParse({ messages: [{ content: 1 }], n: "x" });
    expect(result.success).toBe(false);
    const error = createValidationError(result.error?.issues ?? []);
    expect(error.status).toBe(400);
    expect(error.type).toBe("invalid_request_error");
    expect(error.param).toBe("messages[0].content");
    expect(error.code).toBe("invalid_type");
    expect(error.message).toMatch(/^Invalid 'messages\[0\]\.content': .*\(and 1 more issue\)$/);
  });

  it("names an unknown field as the param", () => {
    const result = schema.safeParse({ messages: [], n: 1, temperature_x: 2 });
    const error = createValidationError(result.error?.issues ?? []);
    expect([error.param, error.code]).toEqual(["temperature_x", "unknown_parameter"]);
    expect(error.message).toBe("Unrecognized request argument supplied: temperature_x");
  });

  it("calls a missing field missing", () => {
    const result = schema.safeParse({ messages: [] });
    expect(createValidationError(result.error?.issues ?? []).code).toBe("missing_required_parameter");
  });
});
