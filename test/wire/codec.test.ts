import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BadRequestError,
  CancelledError,
  EngineFailureError,
  MolWireError,
  OverloadedError,
  ProtocolError,
  UnsupportedVersionError,
  WIRE_ERROR_CODES,
  WIRE_VERSION,
  answerRequestSchema,
  decodeWireMessage,
  encodeWireMessage,
  readRequestId,
  rebuildWireError,
  routeRequestSchema,
  streamPartSchema,
  toWireErrorPayload,
} from "../../schema/wire/v2/index.ts";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const route = {
  version: WIRE_VERSION,
  type: "route",
  requestId: "r1",
  conversationId: "c1",
  view: "user: hi",
  timeoutMs: 1000,
};

describe("wire codec", () => {
  it("round-trips requests and fills the documented defaults", () => {
    const decoded = decodeWireMessage(routeRequestSchema, enc(route), "request");
    expect(decoded).toMatchObject({
      adapter: "l0",
      labels: ["chat", "agent", "coding", "genui"],
      maxTokens: 24,
    });
    expect(decodeWireMessage(routeRequestSchema, encodeWireMessage(decoded), "request")).toEqual(decoded);
    const answer = decodeWireMessage(
      answerRequestSchema,
      enc({ ...route, type: "answer", adapter: "chat" }),
      "request",
    );
    expect(answer.sampling).toMatchObject({ maxTokens: 512, temperature: 0.7, stop: [] });
  });

  it("blames the sender for a bad request and the peer for a bad reply", () => {
    expect(() => decodeWireMessage(routeRequestSchema, enc({ ...route, timeoutMs: -1 }), "request")).toThrow(
      BadRequestError,
    );
    expect(() =>
      decodeWireMessage(streamPartSchema, enc({ version: WIRE_VERSION, type: "nope" }), "reply"),
    ).toThrow(ProtocolError);
    expect(() => decodeWireMessage(routeRequestSchema, new Uint8Array([0xff, 0xfe]), "request")).toThrow(
      /UTF-8/,
    );
    expect(() =>
      decodeWireMessage(routeRequestSchema, enc({ ...route, version: "molmesh.v2" }), "request"),
    ).toThrow(UnsupportedVersionError);
  });

  it("rejects labels that repeat or a budget that cannot hold the longest label", () => {
    expect(() => routeRequestSchema.parse({ ...route, labels: ["chat", "chat"] })).toThrow(/unique/);
    expect(() => routeRequestSchema.parse({ ...route, maxTokens: 5 })).toThrow(/longest label/);
    expect(() => routeRequestSchema.parse({ ...route, maxTokens: 10, reasoningMaxTokens: 5 })).toThrow();
    expect(routeRequestSchema.parse({ ...route, maxTokens: 6 }).maxTokens).toBe(6);
  });

  it("never throws anything but a MolWireError on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          decodeWireMessage(routeRequestSchema, bytes, "request");
        } catch (error) {
          expect(error).toBeInstanceOf(MolWireError);
        }
      }),
    );
  });

  it("reads the request id of a message that fails validation", () => {
    expect(readRequestId(enc({ requestId: "abc", junk: true }))).toBe("abc");
    expect(readRequestId(new TextEncoder().encode("{oops"))).toBeUndefined();
  });
});

describe("typed wire errors", () => {
  it("rebuild into the class of their code, keeping message and retryability", () => {
    for (const code of WIRE_ERROR_CODES) {
      const rebuilt = rebuildWireError({ code, message: `m-${code}`, retryable: code === "overloaded" });
      expect(rebuilt).toBeInstanceOf(MolWireError);
      expect(rebuilt.code).toBe(code);
      expect(rebuilt.name).not.toBe("MolWireError");
      expect(rebuilt.message).toBe(`m-${code}`);
      expect(toWireErrorPayload(rebuilt)).toEqual({
        code,
        message: `m-${code}`,
        retryable: code === "overloaded",
      });
    }
    expect(rebuildWireError({ code: "cancelled", message: "x", retryable: false })).toBeInstanceOf(
      CancelledError,
    );
    expect(new OverloadedError("full").retryable).toBe(true);
  });

  it("carry an overloaded node's retryAfterMs across the wire, and omit it otherwise", () => {
    const payload = toWireErrorPayload(new OverloadedError("queue full", { retryAfterMs: 1234.4 }));
    expect(payload).toEqual({
      code: "overloaded",
      message: "queue full",
      retryable: true,
      retryAfterMs: 1234,
    });
    const sent = encodeWireMessage({ version: WIRE_VERSION, type: "error", requestId: "r", error: payload });
    const part = decodeWireMessage(
      streamPartSchema,
      encodeWireMessage({ version: WIRE_VERSION, seq: 0, type: "error", error: payload }),
      "reply",
    );
    expect(part).toMatchObject({ error: { retryAfterMs: 1234 } });
    expect(JSON.parse(new TextDecoder().decode(sent))).toMatchObject({ error: { retryAfterMs: 1234 } });
    expect(rebuildWireError(payload).retryAfterMs).toBe(1234);
    expect(toWireErrorPayload(new OverloadedError("full"))).not.toHaveProperty("retryAfterMs");
  });

  it("accept an optional tenant id on hop requests", () => {
    const base = {
      version: WIRE_VERSION,
      type: "route",
      requestId: "r",
      conversationId: "c",
      view: "v",
      timeoutMs: 10,
    };
    expect(routeRequestSchema.parse({ ...base, tenantId: "t1" }).tenantId).toBe("t1");
    expect(routeRequestSchema.parse(base).tenantId).toBeUndefined();
    expect(() =>
      answerRequestSchema.parse({ ...base, type: "answer", adapter: "chat", tenantId: "" }),
    ).toThrow();
  });

  it("turn unknown failures into engine_failure", () => {
    const payload = toWireErrorPayload(new TypeError("boom"));
    expect(payload).toEqual({ code: "engine_failure", message: "boom", retryable: true });
    expect(rebuildWireError(payload)).toBeInstanceOf(EngineFailureError);
  });
});
