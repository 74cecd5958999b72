import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import {
  ContextLengthExceededError,
  EngineFailureError,
  OverloadedError,
  MolWireError,
  UnknownAdapterError,
} from "../../schema/wire/v2/index.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  DEFAULT_VLLM_LORAS,
  generateRequest,
  LLAMA_URL,
  llamaServerInitHandlers,
  llamaServerOptions,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
  VLLM_URL,
} from "./engine-fixtures.ts";
import {
  frameStream,
  llamaServerErrorResponse,
  sseResponse,
  toSseFrames,
  vllmCompletionPayloads,
  vllmErrorResponse,
} from "./fake-engine-replies.ts";

const { server, seen } = useMockEngineServer();

type Reply = () => Response | Promise<Response>;

async function generateAgainst(
  flavor: "vllm" | "llama-server",
  reply: Reply,
  onTextDelta?: (d: string) => void,
) {
  const url = flavor === "vllm" ? VLLM_URL : LLAMA_URL;
  server.use(
    ...(flavor === "vllm" ? vllmInitHandlers(DEFAULT_VLLM_LORAS) : llamaServerInitHandlers()),
    http.post(`${url}/v1/completions`, reply),
  );
  const engine = await createOpenAiHttpEngine(flavor === "vllm" ? vllmOptions() : llamaServerOptions());
  return engine.generate(generateRequest(onTextDelta === undefined ? {} : { onTextDelta }));
}

async function rejection(promise: Promise<unknown>): Promise<MolWireError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof MolWireError)) throw new Error(`expected a typed wire error, got ${String(error)}`);
  return error;
}

const VLLM_CONTEXT_MESSAGE =
  "This model's maximum context length is 4096 tokens. However, you requested 64 output tokens and your " +
  "prompt contains at least 4097 input tokens, for a total of at least 4161 tokens.";

describe("HTTP errors", () => {
  it.each([
    [
      "vllm",
      () => vllmErrorResponse(400, VLLM_CONTEXT_MESSAGE, "BadRequestError"),
      ContextLengthExceededError,
    ],
    [
      "llama-server",
      () =>
        llamaServerErrorResponse(
          400,
          "request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it",
          "exceed_context_size_error",
          { n_prompt_tokens: 9412, n_ctx: 8192 },
        ),
      ContextLengthExceededError,
    ],
    [
      "vllm",
      () => vllmErrorResponse(404, "The model `chat` does not exist.", "NotFoundError", "model"),
      UnknownAdapterError,
    ],
    ["vllm", () => vllmErrorResponse(429, "Too many requests", "RateLimitError"), OverloadedError],
    [
      "llama-server",
      () => llamaServerErrorResponse(503, "Loading model", "unavailable_error"),
      OverloadedError,
    ],
    [
      "vllm",
      () => vllmErrorResponse(500, "EngineCore encountered an issue", "InternalServerError"),
      EngineFailureError,
    ],
  ] as const)("%s: maps the error reply to %s", async (flavor, reply, expected) => {
    const error = await rejection(generateAgainst(flavor, reply));
    expect(error).toBeInstanceOf(expected);
  });

  it("keeps the engine's message and marks a request it rejects as malformed as not retryable", async () => {
    const reply = () => vllmErrorResponse(400, "top_p must be in (0, 1], got 1.5.", "BadRequestError");
    const error = await rejection(generateAgainst("vllm", reply));
    expect(error).toBeInstanceOf(EngineFailureError);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("top_p must be in (0, 1]");
  });

  it("turns a network failure into a retryable EngineFailureError with the cause", async () => {
    const error = await rejection(generateAgainst("vllm", () => HttpResponse.error()));
    expect(error).toBeInstanceOf(EngineFailureError);
    expect(error.retryable).toBe(true);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("rejects an unknown molmesh adapter without any HTTP call", async () => {
    server.use(...vllmInitHandlers(DEFAULT_VLLM_LORAS));
    const engine = await createOpenAiHttpEngine(vllmOptions());
    seen.length = 0;
    const error = await rejection(engine.generate(generateRequest({ adapter: "genui" })));
    expect(error).toBeInstanceOf(UnknownAdapterError);
    expect(seen).toEqual([]);
  });
});

describe("stream errors", () => {
  const chunks = vllmCompletionPayloads({
    model: "chat",
    pieces: ["one", " two", " three"],
    finishReason: "stop",
    usage: { prompt: 9, completion: 3, cached: 0 },
  });

  it("fails with EngineFailureError when the stream breaks mid-way, after the deltas already sent", async () => {
    const deltas: string[] = [];
    const broken = frameStream(toSseFrames(chunks.slice(0, 2), false), {
      kind: "error",
      error: new TypeError("terminated: other side closed"),
    });
    const error = await rejection(
      generateAgainst(
        "vllm",
        () => sseResponse(broken),
        (d) => deltas.push(d),
      ),
    );
    expect(error).toBeInstanceOf(EngineFailureError);
    expect(error.message).toMatch(/broke mid-way/);
    expect(error.cause).toBeDefined();
    expect(deltas).toEqual(["one", " two"]);
  });

  it("fails when the stream ends without a finish_reason", async () => {
    const error = await rejection(
      generateAgainst("vllm", () => sseResponse(toSseFrames(chunks.slice(0, 2), false))),
    );
    expect(error).toBeInstanceOf(EngineFailureError);
    expect(error.message).toMatch(/without a finish_reason/);
  });

  it("fails on a malformed chunk", async () => {
    const frames = [...toSseFrames(chunks.slice(0, 1), false), 'data: {"choices":[{"text":\n\n'];
    const error = await rejection(generateAgainst("vllm", () => sseResponse(frames)));
    expect(error).toBeInstanceOf(EngineFailureError);
    expect(error.message).toMatch(/malformed/);
  });

  it("maps an error event sent inside the stream", async () => {
    const failure = {
      error: { message: VLLM_CONTEXT_MESSAGE, type: "BadRequestError", param: null, code: 400 },
    };
    const frames = [...toSseFrames(chunks.slice(0, 1), false), ...toSseFrames([failure])];
    const error = await rejection(generateAgainst("vllm", () => sseResponse(frames)));
    expect(error).toBeInstanceOf(ContextLengthExceededError);
  });

  it("maps llama-server's legacy bare `error:` line", async () => {
    const frames = ['error: {"code":500,"message":"slot crashed","type":"server_error"}\n\n'];
    const error = await rejection(generateAgainst("llama-server", () => sseResponse(frames)));
    expect(error).toBeInstanceOf(EngineFailureError);
    expect(error.message).toContain("slot crashed");
  });

  it("treats vLLM's finish_reason `abort` as an engine failure", async () => {
    const aborted = vllmCompletionPayloads({
      model: "chat",
      pieces: ["par"],
      finishReason: "abort",
      usage: { prompt: 9, completion: 1, cached: 0 },
    });
    const error = await rejection(generateAgainst("vllm", () => sseResponse(toSseFrames(aborted))));
    expect(error).toBeInstanceOf(EngineFailureError);
  });
});
