import { http } from "msw";
import { describe, expect, it } from "vitest";
import { BadRequestError, UnknownAdapterError } from "../../schema/wire/v2/index.ts";
import type { Engine } from "../../gpu-nodes/src/engine/engine.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  CHAT_GGUF,
  CODING_GGUF,
  DEFAULT_VLLM_LORAS,
  FOREIGN_GGUF,
  LLAMA_URL,
  VLLM_URL,
  generateRequest,
  llamaServerInitHandlers,
  llamaServerOptions,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
} from "./engine-fixtures.ts";
import {
  llamaServerCompletionPayloads,
  sseResponse,
  toSseFrames,
  vllmCompletionPayloads,
  vllmErrorResponse,
} from "./fake-engine-replies.ts";

const { server, seen } = useMockEngineServer();

const CHAT_V2_PATH = "/srv/adapters/chat-v2";

const vllmReply = toSseFrames(
  vllmCompletionPayloads({
    model: "any",
    pieces: ["ok"],
    finishReason: "stop",
    usage: { prompt: 4, completion: 1, cached: 0 },
  }),
);

/** A completion endpoint that records each body and answers once `gate` (if any) lets it. */
function recordCompletions(url: string, frames: string[], gate?: Promise<void>) {
  const bodies: Array<Record<string, unknown>> = [];
  const handler = http.post(`${url}/v1/completions`, async ({ request }) => {
    bodies.push((await request.json()) as Record<string, unknown>);
    await gate;
    return sseResponse(frames);
  });
  return { bodies, handler };
}

const nameOf = (engine: Engine, requested: string): string => {
  const name = engine.resolveAdapter(requested)?.name;
  if (name === undefined) throw new Error(`${requested} is not held`);
  return name;
};

describe("vLLM adapter revisions at run time", () => {
  it("loads a second revision under its own versioned name; the bare label stays on the first", async () => {
    const completions = recordCompletions(VLLM_URL, vllmReply);
    server.use(...vllmInitHandlers(DEFAULT_VLLM_LORAS), completions.handler);
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const first = nameOf(engine, "chat");
    seen.length = 0;

    const canary = await engine.loadAdapter({ label: "chat", path: CHAT_V2_PATH });
    expect(canary).toMatchObject({ id: "chat", lora: true });
    expect(canary.name).toMatch(/^chat@[0-9a-f]{12}$/);
    expect(canary.name).not.toBe(first);
    expect(seen).toEqual(["POST /v1/load_lora_adapter", "GET /v1/models"]);
    // Idempotent: the held revision, no second call to the server.
    expect(await engine.loadAdapter({ label: "chat", path: CHAT_V2_PATH })).toEqual(canary);
    expect(seen).toHaveLength(2);
    expect(engine.adapters().map((adapter) => adapter.name)).toEqual([
      nameOf(engine, "l0"),
      first,
      nameOf(engine, "coding"),
      canary.name,
    ]);
    expect(engine.snapshot().map((slots) => [slots.adapter, slots.name])).toContainEqual([
      "chat",
      canary.name,
    ]);

    await engine.generate(generateRequest({ adapter: "chat" }));
    await engine.generate(generateRequest({ adapter: canary.name }));
    await engine.generate(generateRequest({ adapter: canary.name.slice(0, "chat@".length + 8) }));
    expect(completions.bodies.map((body) => body["model"])).toEqual([first, canary.name, canary.name]);
    await expect(engine.generate(generateRequest({ adapter: "chat@0123456789ab" }))).rejects.toBeInstanceOf(
      UnknownAdapterError,
    );
  });

  it("unloads after the requests running on the revision finish, refusing new ones at once", async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const completions = recordCompletions(VLLM_URL, vllmReply, gate);
    const unloads: unknown[] = [];
    server.use(
      http.post(`${VLLM_URL}/v1/unload_lora_adapter`, async ({ request }) => {
        unloads.push(await request.clone().json());
        return undefined;
      }),
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
      completions.handler,
    );
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const first = nameOf(engine, "chat");
    const canary = await engine.loadAdapter({ label: "chat", path: CHAT_V2_PATH });
    const running = engine.generate(generateRequest({ adapter: first }));
    await expect.poll(() => completions.bodies.length).toBe(1);

    const unloading = engine.unloadAdapter(first);
    await expect(engine.generate(generateRequest({ adapter: first }))).rejects.toBeInstanceOf(
      UnknownAdapterError,
    );
    // The label's next oldest revision is its default now.
    expect(engine.resolveAdapter("chat")?.name).toBe(canary.name);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unloads).toEqual([]);
    open();
    await expect(running).resolves.toMatchObject({ text: "ok" });
    await unloading;
    expect(unloads).toEqual([{ lora_name: first }]);
    expect(engine.adapters().map((adapter) => adapter.name)).not.toContain(first);
    expect(engine.snapshot().map((slots) => slots.name)).not.toContain(first);
    await expect(engine.unloadAdapter(first)).rejects.toBeInstanceOf(UnknownAdapterError);
    await expect(engine.unloadAdapter("chat")).rejects.toBeInstanceOf(BadRequestError);
  });

  it("a refused load leaves the engine as it was: bad_request for a file vLLM cannot load", async () => {
    server.use(...vllmInitHandlers(DEFAULT_VLLM_LORAS));
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const before = engine.adapters();
    server.use(
      http.post(`${VLLM_URL}/v1/load_lora_adapter`, () =>
        vllmErrorResponse(400, "Loading lora chat failed: No adapter found for /srv/nope", "BadRequestError"),
      ),
    );
    const failure = engine.loadAdapter({ label: "chat", path: "/srv/nope" });
    await expect(failure).rejects.toBeInstanceOf(BadRequestError);
    await expect(failure).rejects.toThrow(/refused to load LoRA "chat@[0-9a-f]{12}" from \/srv\/nope/);
    expect(engine.adapters()).toEqual(before);
  });

  it("names a revision by the content of the files when the node can read them", async () => {
    server.use(...vllmInitHandlers(DEFAULT_VLLM_LORAS));
    const contents = new Map([[CHAT_V2_PATH, "sha256:0123456789abcdef"]]);
    const engine = await createOpenAiHttpEngine(
      vllmOptions({ fingerprintPath: (path) => Promise.resolve(contents.get(path)) }),
    );
    const loaded = await engine.loadAdapter({ label: "chat", path: CHAT_V2_PATH });
    expect(loaded).toMatchObject({ name: "chat@0123456789ab", revision: "sha256:0123456789abcdef" });
  });
});

const llamaReply = toSseFrames(
  llamaServerCompletionPayloads({
    pieces: ["ok"],
    finishReason: "stop",
    usage: { prompt: 4, completion: 1, cached: 0 },
    timings: { cache_n: 0, prompt_n: 4, predicted_n: 1 },
  }),
);

describe("llama-server adapter revisions at run time", () => {
  it("loading selects one of the server's LoRAs by path; unloading only stops selecting it", async () => {
    const completions = recordCompletions(LLAMA_URL, llamaReply);
    server.use(...llamaServerInitHandlers(), completions.handler);
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    seen.length = 0;
    const canary = await engine.loadAdapter({ label: "chat", path: FOREIGN_GGUF, scale: 0.5 });
    expect(seen).toEqual(["GET /lora-adapters"]);
    expect(canary.name).not.toBe(nameOf(engine, "chat"));
    await engine.generate(generateRequest({ adapter: canary.name }));
    expect(completions.bodies[0]?.["lora"]).toEqual([
      { id: 0, scale: 0 },
      { id: 1, scale: 0.5 },
      { id: 2, scale: 0 },
    ]);

    seen.length = 0;
    await engine.unloadAdapter(canary.name);
    expect(seen).toEqual([]);
    await expect(engine.generate(generateRequest({ adapter: canary.name }))).rejects.toBeInstanceOf(
      UnknownAdapterError,
    );
  });

  it("fails clearly for a path the server was not started with, and changes nothing", async () => {
    server.use(...llamaServerInitHandlers());
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    const before = engine.adapters();
    const failure = engine.loadAdapter({ label: "agent", path: "/srv/adapters/agent.gguf" });
    await expect(failure).rejects.toBeInstanceOf(BadRequestError);
    await expect(failure).rejects.toThrow(/no LoRA for adapter "agent".*restart it with --lora/);
    expect(engine.adapters()).toEqual(before);
  });

  it("sends every LoRA id the server holds, each with an explicit scale, on every request", async () => {
    const completions = recordCompletions(LLAMA_URL, llamaReply);
    server.use(...llamaServerInitHandlers([CHAT_GGUF, FOREIGN_GGUF, CODING_GGUF]), completions.handler);
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    const canary = await engine.loadAdapter({ label: "chat", path: FOREIGN_GGUF });
    const bare = await engine.loadAdapter({ label: "summary" });
    const requested = ["l0", "chat", "coding", canary.name, bare.name];
    for (const adapter of requested) await engine.generate(generateRequest({ adapter }));
    const scales = completions.bodies.map((body) => body["lora"]);
    expect(scales).toEqual([
      [
        { id: 0, scale: 0 },
        { id: 1, scale: 0 },
        { id: 2, scale: 0 },
      ],
      [
        { id: 0, scale: 1 },
        { id: 1, scale: 0 },
        { id: 2, scale: 0 },
      ],
      [
        { id: 0, scale: 0 },
        { id: 1, scale: 0 },
        { id: 2, scale: 0.75 },
      ],
      [
        { id: 0, scale: 0 },
        { id: 1, scale: 1 },
        { id: 2, scale: 0 },
      ],
      [
        { id: 0, scale: 0 },
        { id: 1, scale: 0 },
        { id: 2, scale: 0 },
      ],
    ]);
  });
});
