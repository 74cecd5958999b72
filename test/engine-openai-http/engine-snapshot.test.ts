import { http } from "msw";
import { describe, expect, it } from "vitest";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  DEFAULT_VLLM_LORAS,
  generateRequest,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
  VLLM_URL,
} from "./engine-fixtures.ts";
import { frameStream, sseResponse, toSseFrames, vllmCompletionPayloads } from "./fake-engine-replies.ts";

const { server } = useMockEngineServer();

const frames = toSseFrames(
  vllmCompletionPayloads({
    model: "chat",
    pieces: ["ok"],
    finishReason: "stop",
    usage: { prompt: 4, completion: 1, cached: 0 },
  }),
);

describe("snapshot", () => {
  it("reports the most recently served conversations per adapter, bounded by warmSlotsPerAdapter", async () => {
    server.use(
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
      http.post(`${VLLM_URL}/v1/completions`, () => sseResponse(frames)),
    );
    const engine = await createOpenAiHttpEngine(vllmOptions({ warmSlotsPerAdapter: 2 }));
    for (const conversationId of ["a", "b", "c", "a"]) {
      await engine.generate(generateRequest({ conversationId }));
    }
    await engine.generate(generateRequest({ adapter: "l0", conversationId: "z" }));
    const nameOf = (label: string) => engine.resolveAdapter(label)?.name;
    expect(engine.snapshot()).toEqual([
      {
        adapter: "l0",
        name: nameOf("l0"),
        totalSlots: 2,
        freeSlots: 2,
        warmConversations: ["z"],
        waiting: 0,
      },
      {
        adapter: "chat",
        name: nameOf("chat"),
        totalSlots: 2,
        freeSlots: 2,
        warmConversations: ["a", "c"],
        waiting: 0,
      },
      {
        adapter: "coding",
        name: nameOf("coding"),
        totalSlots: 2,
        freeSlots: 2,
        warmConversations: [],
        waiting: 0,
      },
    ]);
  });

  it("counts in-flight generations against the adapter's free slots", async () => {
    server.use(
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
      http.post(`${VLLM_URL}/v1/completions`, () =>
        sseResponse(frameStream(frames.slice(0, 1), { kind: "hang" })),
      ),
    );
    const engine = await createOpenAiHttpEngine(vllmOptions({ warmSlotsPerAdapter: 3 }));
    const controller = new AbortController();
    let inFlight: ReturnType<typeof engine.snapshot> = [];
    const generation = engine.generate(
      generateRequest({
        conversationId: "live",
        signal: controller.signal,
        onTextDelta: () => {
          inFlight = engine.snapshot();
          controller.abort();
        },
      }),
    );
    await expect(generation).rejects.toThrow();
    const chat = inFlight.find((slots) => slots.adapter === "chat");
    expect(chat).toEqual({
      adapter: "chat",
      name: engine.resolveAdapter("chat")?.name,
      totalSlots: 3,
      freeSlots: 2,
      warmConversations: ["live"],
      waiting: 0,
    });
  });
});
