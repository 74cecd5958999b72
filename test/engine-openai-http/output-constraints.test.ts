import { http } from "msw";
import { describe, expect, it } from "vitest";
import type { SubsetSchema } from "../../schema/tools/json-schema-subset.ts";
import { buildToolCallSchema, TOOL_CALL_MARKER } from "../../schema/tools/tool-call-text.ts";
import { BadRequestError } from "../../schema/wire/v2/index.ts";
import type { EngineConstraint } from "../../gpu-nodes/src/engine/engine.ts";
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
  llamaServerCompletionPayloads,
  sseResponse,
  toSseFrames,
  vllmCompletionPayloads,
} from "./fake-engine-replies.ts";

const { server } = useMockEngineServer();

const schema: SubsetSchema = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 8 },
    tags: { type: "array", items: { enum: ["a", "b"] } },
  },
};
/** What both servers must receive: the subset's implicit rules spelled out. */
const strict = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 8 },
    tags: { type: "array", items: { enum: ["a", "b"] } },
  },
  required: ["city", "tags"],
  additionalProperties: false,
};
const tools = [{ name: "lookup", parameters: schema }];
const callSchema = buildToolCallSchema(tools, "required", false);
const CALL = '{"name": "lookup", "arguments": {"city": "Oslo", "tags": []}}';

type Body = Record<string, unknown>;

function vllmServer(bodies: Body[], pieces: string[]) {
  server.use(
    ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
    http.post(`${VLLM_URL}/v1/completions`, async ({ request }) => {
      bodies.push((await request.json()) as Body);
      return sseResponse(
        toSseFrames(
          vllmCompletionPayloads({
            model: "chat",
            pieces,
            finishReason: "stop",
            usage: { prompt: 9, completion: 3, cached: null },
          }),
        ),
      );
    }),
  );
}

function llamaServer(bodies: Body[], pieces: string[]) {
  server.use(
    ...llamaServerInitHandlers(),
    http.post(`${LLAMA_URL}/v1/completions`, async ({ request }) => {
      bodies.push((await request.json()) as Body);
      return sseResponse(
        toSseFrames(
          llamaServerCompletionPayloads({
            pieces,
            finishReason: "stop",
            usage: { prompt: 9, completion: 3, cached: 0 },
            timings: { cache_n: 0, prompt_n: 9, predicted_n: 3 },
          }),
        ),
      );
    }),
  );
}

describe("vLLM: output constraints in the request body", () => {
  it.each<[string, EngineConstraint, unknown]>([
    ["json_schema", { type: "json_schema", schema }, { json: strict }],
    ["json_object", { type: "json_object" }, { json_object: true }],
  ])("%s → structured_outputs", async (_name, constraint, expected) => {
    const bodies: Body[] = [];
    vllmServer(bodies, ['{"city"', ': "x", "tags": []}']);
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const result = await engine.generate(generateRequest({ constraint }));
    expect(bodies[0]?.["structured_outputs"]).toEqual(expected);
    expect(bodies[0]).not.toHaveProperty("grammar");
    expect(result.text).toBe('{"city": "x", "tags": []}');
  });

  it("a required tool call: the marker ends the prompt, the call is decoded under its schema", async () => {
    const bodies: Body[] = [];
    vllmServer(bodies, [CALL]);
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const deltas: string[] = [];
    const request = generateRequest({
      constraint: { type: "tools", callSchema, mode: "required" },
      onTextDelta: (d) => deltas.push(d),
    });
    const result = await engine.generate(request);
    expect(bodies[0]?.["prompt"]).toBe(request.prompt + TOOL_CALL_MARKER);
    expect(bodies[0]?.["structured_outputs"]).toEqual({
      json: {
        type: "object",
        properties: { name: { const: "lookup" }, arguments: strict },
        required: ["name", "arguments"],
        additionalProperties: false,
      },
    });
    expect(result.text).toBe(TOOL_CALL_MARKER + CALL);
    expect(deltas.join("")).toBe(result.text);
    expect(engine.features).toEqual([
      "output:json_schema",
      "output:json_object",
      "output:tools",
      "output:grammar",
    ]);
  });

  it('refuses tool choice "auto" as bad_request without calling the server', async () => {
    const bodies: Body[] = [];
    vllmServer(bodies, ["x"]);
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const failure = engine.generate(
      generateRequest({ constraint: { type: "tools", callSchema, mode: "auto" } }),
    );
    await expect(failure).rejects.toBeInstanceOf(BadRequestError);
    expect(bodies).toEqual([]);
  });
});

describe("llama-server: output constraints in the request body", () => {
  it.each<[string, EngineConstraint, unknown]>([
    ["json_schema", { type: "json_schema", schema }, strict],
    ["json_object", { type: "json_object" }, { type: "object" }],
  ])("%s → json_schema", async (_name, constraint, expected) => {
    const bodies: Body[] = [];
    llamaServer(bodies, ["{}"]);
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    await engine.generate(generateRequest({ constraint }));
    expect(bodies[0]?.["json_schema"]).toEqual(expected);
    expect(bodies[0]).not.toHaveProperty("grammar");
  });

  it("a required tool call carries the call schema and the marker-ended prompt", async () => {
    const bodies: Body[] = [];
    llamaServer(bodies, [CALL]);
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    const request = generateRequest({ constraint: { type: "tools", callSchema, mode: "required" } });
    const result = await engine.generate(request);
    expect(bodies[0]?.["prompt"]).toBe(request.prompt + TOOL_CALL_MARKER);
    expect(bodies[0]?.["json_schema"]).toMatchObject({
      properties: { arguments: strict },
      additionalProperties: false,
    });
    expect(result.text).toBe(TOOL_CALL_MARKER + CALL);
  });
});
