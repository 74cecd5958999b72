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
  decodeWireMessage,
  encodeWireMessage,
  generateRequestSchema,
  nodeStatusSchema,
  readAdapterName,
  readRequestId,
  readWireVersions,
  rebuildWireError,
  streamPartSchema,
  toWireErrorPayload,
} from "../../schema/wire/v2/index.ts";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const request = {
  version: WIRE_VERSION,
  type: "generate",
  requestId: "r1",
  adapter: "chat",
  prompt: "user: hi",
  slotKey: "c1",
  priority: "answer",
  timeoutMs: 1000,
};
const choice = (choices: string[], extra: Record<string, unknown> = {}) => ({
  ...request,
  adapter: "l0",
  priority: "route",
  constraint: { type: "choice", choices, ...extra },
});

describe("wire codec", () => {
  it("round-trips requests and fills the documented defaults", () => {
    const decoded = decodeWireMessage(generateRequestSchema, enc(request), "request");
    expect(decoded.sampling).toMatchObject({ maxTokens: 512, temperature: 0.7, stop: [] });
    expect(decoded.return).toEqual({
      stream: false,
      choiceProbabilities: false,
      tokens: false,
      topLogprobs: 0,
    });
    expect(decodeWireMessage(generateRequestSchema, encodeWireMessage(decoded), "request")).toEqual(decoded);
    const routed = generateRequestSchema.parse(choice(["chat", "coding"]));
    expect(routed.constraint).toEqual({ type: "choice", choices: ["chat", "coding"], reasoningMaxTokens: 0 });
  });

  it("names adapters by label or by label@rev, and nothing else", () => {
    expect(generateRequestSchema.parse({ ...request, adapter: "chat@0123456789ab" }).adapter).toBe(
      "chat@0123456789ab",
    );
    for (const adapter of ["Chat", "chat@", "chat@xyz", "chat@0123", "a.b", "@0123456789ab"]) {
      expect(() => generateRequestSchema.parse({ ...request, adapter })).toThrow();
    }
  });

  it("blames the sender for a bad request and the peer for a bad reply", () => {
    expect(() =>
      decodeWireMessage(generateRequestSchema, enc({ ...request, timeoutMs: -1 }), "request"),
    ).toThrow(BadRequestError);
    expect(() =>
      decodeWireMessage(streamPartSchema, enc({ version: WIRE_VERSION, type: "nope" }), "reply"),
    ).toThrow(ProtocolError);
    expect(() => decodeWireMessage(generateRequestSchema, new Uint8Array([0xff, 0xfe]), "request")).toThrow(
      /UTF-8/,
    );
    expect(() =>
      decodeWireMessage(generateRequestSchema, enc({ ...request, version: "molmesh.v1" }), "request"),
    ).toThrow(UnsupportedVersionError);
    // Strict: a field this peer does not know is refused, never dropped (it may have constrained the output).
    expect(() =>
      decodeWireMessage(generateRequestSchema, enc({ ...request, view: "user: hi" }), "request"),
    ).toThrow(BadRequestError);
  });

  it("rejects choices that repeat or a budget that cannot hold the longest choice", () => {
    expect(() => generateRequestSchema.parse(choice(["chat", "chat"]))).toThrow(/unique/);
    const budget = (maxTokens: number, reasoningMaxTokens = 0) => ({
      ...choice(["chat", "coding"], { reasoningMaxTokens }),
      sampling: { maxTokens },
    });
    expect(() => generateRequestSchema.parse(budget(5))).toThrow(/longest choice/);
    expect(() => generateRequestSchema.parse(budget(10, 5))).toThrow();
    expect(generateRequestSchema.parse(budget(6)).sampling.maxTokens).toBe(6);
  });

  it("reads every version's heartbeat, with the wire versions its node speaks and its adapters' names", () => {
    const beat = {
      version: "molmesh.v1",
      nodeId: "old",
      engine: "llama.cpp",
      baseModel: { name: "b", revision: "sha256:aa" },
      adapters: [
        {
          id: "chat",
          revision: "sha256:0123456789abcdef",
          lora: true,
          totalSlots: 1,
          freeSlots: 1,
          warmConversations: [],
        },
      ],
      inFlight: 0,
      maxConcurrent: 8,
      queueDepth: 0,
      startedAt: 0,
      updatedAt: 0,
      heartbeatIntervalMs: 1000,
    };
    const v1 = decodeWireMessage(nodeStatusSchema, enc(beat), "reply", { anyVersion: true });
    expect(readWireVersions(v1)).toEqual(["molmesh.v1"]);
    expect(readAdapterName(v1.adapters[0] as (typeof v1.adapters)[number])).toBe("chat@0123456789ab");
    const v2 = nodeStatusSchema.parse({
      ...beat,
      version: WIRE_VERSION,
      wireVersions: ["molmesh.v1", WIRE_VERSION],
    });
    expect(readWireVersions(v2)).toContain(WIRE_VERSION);
    expect(() => decodeWireMessage(nodeStatusSchema, enc(beat), "reply")).toThrow(UnsupportedVersionError);
  });

  it("never throws anything but a MolWireError on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          decodeWireMessage(generateRequestSchema, bytes, "request");
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

  it("accept an optional tenant id on generate requests", () => {
    expect(generateRequestSchema.parse({ ...request, tenantId: "t1" }).tenantId).toBe("t1");
    expect(generateRequestSchema.parse(request).tenantId).toBeUndefined();
    expect(() => generateRequestSchema.parse({ ...request, tenantId: "" })).toThrow();
  });

  it("turn unknown failures into engine_failure", () => {
    const payload = toWireErrorPayload(new TypeError("boom"));
    expect(payload).toEqual({ code: "engine_failure", message: "boom", retryable: true });
    expect(rebuildWireError(payload)).toBeInstanceOf(EngineFailureError);
  });
});
