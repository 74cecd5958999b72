import { describe, expect, it } from "vitest";
import { CONVERSATION_ID, createChatMesh } from "./chat-mesh.ts";
import { cutSseResponse, errorResponse, makeMeshTurn, sseResponse } from "./mesh-fixtures.ts";
import { runCliInMemory } from "./run-cli-in-memory.ts";
import { CTRL_C } from "./scripted-terminal.ts";

const CODING_STATUS =
  "── coding · router · rev rev1 · route 5ms · first token 9ms · answer 40ms · answer 150/200 cached (75%) · turn 240/300 cached (80%)";

function answer(n: number, pieces: string[]) {
  return () => sseResponse({ pieces, turn: makeMeshTurn(n, pieces.join("")) });
}

describe("molmesh chat", { timeout: 10_000 }, () => {
  it("sends three piped lines as three streamed turns and prints the text and a status line after each", async () => {
    const run = await runCliInMemory({
      argv: ["chat"],
      script: ["hello", "write a python function", "thanks"],
      handle: createChatMesh([
        answer(1, ["Hel", "lo!"]),
        answer(2, ["def f():", "\n    ", "return 1"]),
        answer(3, ["You're ", "welcome."]),
      ]),
    });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        "> hello",
        "Hello!",
        CODING_STATUS,
        "",
        "> write a python function",
        "def f():",
        "    return 1",
        CODING_STATUS,
        "",
        "> thanks",
        "You're welcome.",
        CODING_STATUS,
        "",
        "",
      ].join("\n"),
    );
    expect(run.stderr).toContain(`conversation ${CONVERSATION_ID} on http://127.0.0.1:8787 (model mol)`);
    expect(run.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "POST /v1/conversations",
      "POST /v1/responses",
      "POST /v1/responses",
      "POST /v1/responses",
    ]);
    expect(run.requests[2]?.body).toEqual({
      conversation: CONVERSATION_ID,
      input: "write a python function",
      stream: true,
    });
    expect(run.requests[0]?.authorization).toBe("Bearer sk-molmesh-dev-local");
    expect(run.terminal.closed).toBe(true);
  });

  it("--json prints one JSON object per line: the conversation, then each turn with its text and mol", async () => {
    const run = await runCliInMemory({
      argv: ["chat", "--json"],
      script: ["a", "b"],
      handle: createChatMesh([answer(1, ["one"]), answer(2, ["t", "wo"])]),
    });

    expect(run.code).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual({ event: "conversation", id: CONVERSATION_ID, created: true });
    expect(lines[2]).toMatchObject({
      event: "turn",
      conversation: CONVERSATION_ID,
      input: "b",
      status: "completed",
      text: "two",
      response_id: "resp_turn_02",
      usage: { input_tokens: 300, input_tokens_details: { cached_tokens: 240 } },
      mol: {
        label: "coding",
        source: "router",
        revision: "rev1",
        usage: { answer: { cachedPromptTokens: 150 } },
      },
    });
  });

  it("continues a conversation given by id, forces a model, and shows forced and fallback sources", async () => {
    const forced = makeMeshTurn(1, "ok", {});
    forced.mol = { ...forced.mol, label: "agent", adapter: "agent", source: "forced" };
    const fallback = makeMeshTurn(2, "ok");
    fallback.mol = {
      ...fallback.mol,
      label: "chat",
      source: "fallback",
      fallback: { code: "overloaded", message: "node busy", to: "default" },
    };
    const run = await runCliInMemory({
      argv: ["chat", "--conversation", CONVERSATION_ID, "--model", "mol:agent"],
      script: ["x", "y"],
      handle: createChatMesh([
        () => sseResponse({ pieces: ["ok"], turn: forced }),
        () => sseResponse({ pieces: ["ok"], turn: fallback }),
      ]),
    });

    expect(run.code).toBe(0);
    expect(run.requests[0]).toMatchObject({ method: "GET", path: `/v1/conversations/${CONVERSATION_ID}` });
    expect(run.requests[1]?.body).toEqual({
      conversation: CONVERSATION_ID,
      input: "x",
      stream: true,
      model: "mol:agent",
    });
    expect(run.stdout).toContain("── agent · forced · rev rev1 ·");
    expect(run.stdout).toContain("── chat · fallback(overloaded→default) · rev rev1 ·");
  });

  it("stops at /exit without reading further lines", async () => {
    const run = await runCliInMemory({
      argv: ["chat"],
      script: ["hi", "  ", "/exit", "never sent"],
      handle: createChatMesh([answer(1, ["hey"])]),
    });

    expect(run.code).toBe(0);
    expect(run.requests.filter((request) => request.path === "/v1/responses")).toHaveLength(1);
    expect(run.terminal.prompts).toBe(3);
  });

  it("Ctrl-C while an answer streams cancels that request and keeps the chat open", async () => {
    let cancelled: AbortSignal | undefined;
    const run = await runCliInMemory({
      argv: ["chat"],
      script: ["tell me a long story", "short one"],
      handle: createChatMesh([
        (request) => {
          cancelled = request.signal;
          return sseResponse({
            pieces: ["Once upon"],
            turn: makeMeshTurn(1, "Once upon"),
            stall: true,
          });
        },
        answer(2, ["The end."]),
      ]),
      onStdout: (text, terminal) => {
        if (text === "Once upon") expect(terminal.interrupt()).toBe(true);
      },
    });

    expect(cancelled?.aborted).toBe(true);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "> tell me a long story\nOnce upon\n── cancelled\n\n> short one\nThe end.\n── coding",
    );
  });

  it("Ctrl-C twice at the prompt leaves with 130; once, then a line, does not", async () => {
    const twice = await runCliInMemory({
      argv: ["chat"],
      script: [CTRL_C, CTRL_C, "never"],
      handle: createChatMesh([]),
    });
    expect(twice.code).toBe(130);
    expect(twice.stderr).toContain("Ctrl-C again to leave");
    expect(twice.terminal.closed).toBe(true);

    const once = await runCliInMemory({
      argv: ["chat"],
      script: [CTRL_C, "hi", CTRL_C],
      handle: createChatMesh([answer(1, ["hey"])]),
    });
    expect(once.code).toBe(0);
    expect(once.stdout).toContain("hey\n── coding");
  });

  it("reports a turn that fails mid-stream, goes on with the next line, and exits 1", async () => {
    const run = await runCliInMemory({
      argv: ["chat"],
      script: ["first", "second"],
      handle: createChatMesh([
        () =>
          sseResponse({
            pieces: ["Half"],
            turn: makeMeshTurn(1, "Half"),
            error: { code: "deadline_exceeded", message: "the answer hop timed out" },
          }),
        answer(2, ["Whole."]),
      ]),
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/turn failed: .+/);
    expect(run.stdout).toContain("Half\n── coding · router");
    expect(run.stdout).toContain("Whole.\n── coding");
  });

  it("reports a stream cut before its terminal event as a failed turn", async () => {
    const run = await runCliInMemory({
      argv: ["chat"],
      script: ["first"],
      handle: createChatMesh([() => cutSseResponse({ pieces: ["Cut"], turn: makeMeshTurn(1, "Cut") })]),
    });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain("Cut\n");
    expect(run.stderr).toContain("turn failed: the answer stream ended before the turn finished");
  });

  it("goes on after a 503 but stops at a 401: every later turn would fail the same way", async () => {
    const noNodes = () =>
      errorResponse({
        status: 503,
        type: "server_error",
        code: "no_responders",
        message: "No GPU node is available.",
      });
    const badKey = () =>
      errorResponse({
        status: 401,
        type: "invalid_request_error",
        code: "invalid_api_key",
        message: "Incorrect API key.",
      });
    const run = await runCliInMemory({
      argv: ["chat"],
      script: ["a", "b", "c"],
      handle: createChatMesh([noNodes, badKey, answer(3, ["never"])]),
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "turn failed: No GPU node is available. (no_responders, HTTP 503, request req_test)",
    );
    expect(run.stderr).toContain(
      "turn failed: Incorrect API key. (invalid_api_key, HTTP 401, request req_test)",
    );
    expect(run.requests.filter((request) => request.path === "/v1/responses")).toHaveLength(2);
  });

  it("fails before the first prompt when the given conversation does not exist", async () => {
    const run = await runCliInMemory({
      argv: ["chat", "-c", "conv_gone"],
      script: ["hi"],
      handle: createChatMesh([]),
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "molmesh: No conversation found with id 'conv_gone'. (conversation_not_found, HTTP 404, request req_test)",
    );
    expect(run.terminal.prompts).toBe(0);
    expect(run.terminal.closed).toBe(true);
  });
});
