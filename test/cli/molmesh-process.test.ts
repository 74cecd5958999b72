import { afterEach, describe, expect, it } from "vitest";
import { CONVERSATION_ID, createChatMesh } from "./chat-mesh.ts";
import { errorResponse, makeMeshTurn, sseResponse } from "./mesh-fixtures.ts";
import { startMeshServer } from "./start-mesh-server.ts";
import { spawnMolmesh } from "./spawn-molmesh.ts";

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function startServer(...args: Parameters<typeof startMeshServer>) {
  const server = await startMeshServer(...args);
  servers.push(server);
  return server;
}

function answer(n: number, pieces: string[]) {
  return () => sseResponse({ pieces, turn: makeMeshTurn(n, pieces.join("")) });
}

describe("molmesh as a child process over real HTTP", { timeout: 30_000 }, () => {
  it("chat --json: three piped lines give the conversation line and three turn lines, exit 0", async () => {
    const server = await startServer(
      createChatMesh([answer(1, ["Hel", "lo"]), answer(2, ["Fine", "."]), answer(3, ["Bye"])]),
    );
    const cli = spawnMolmesh(["chat", "--json", "--base-url", server.url, "--api-key", "sk-test"]);
    cli.child.stdin.end("hello\nhow are you\nbye\n");

    expect(await cli.exited).toBe(0);
    const lines = cli.output.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line["event"], line["text"] ?? line["id"]])).toEqual([
      ["conversation", CONVERSATION_ID],
      ["turn", "Hello"],
      ["turn", "Fine."],
      ["turn", "Bye"],
    ]);
    expect(lines[1]).toMatchObject({ status: "completed", mol: { label: "coding", source: "router" } });
    expect(server.requests.map((request) => request.authorization)).toEqual(Array(4).fill("Bearer sk-test"));
    expect(cli.output.stderr).toBe("");
  });

  it("chat: SIGINT while an answer streams cancels that turn on the server and the chat goes on", async () => {
    const server = await startServer(
      createChatMesh([
        () => sseResponse({ pieces: ["Once upon"], turn: makeMeshTurn(1, "Once upon"), stall: true }),
        answer(2, ["The end."]),
      ]),
    );
    const cli = spawnMolmesh(["chat", "--base-url", server.url]);
    cli.child.stdin.write("tell me a long story\n");
    await cli.waitForStdout("Once upon");
    cli.child.kill("SIGINT");
    await cli.waitForStdout("── cancelled");
    cli.child.stdin.end("short one\n");

    expect(await cli.exited).toBe(0);
    expect(server.requests[1]?.signal.aborted).toBe(true);
    expect(server.requests[2]?.signal.aborted).toBe(false);
    expect(cli.output.stdout).toBe(
      [
        "> tell me a long story",
        "Once upon",
        "── cancelled",
        "",
        "> short one",
        "The end.",
        "── coding · router · rev rev1 · route 5ms · first token 9ms · answer 40ms · answer 150/200 cached (75%) · turn 240/300 cached (80%)",
        "",
        "",
      ].join("\n"),
    );
  });

  it("items: an API error envelope is one line on stderr and exit code 1", async () => {
    const server = await startServer(() =>
      errorResponse({
        status: 401,
        type: "invalid_request_error",
        code: "invalid_api_key",
        message: "Incorrect or missing API key.",
      }),
    );
    const cli = spawnMolmesh(["items", "conv_01", "--base-url", server.url]);
    cli.child.stdin.end();

    expect(await cli.exited).toBe(1);
    expect(cli.output.stdout).toBe("");
    expect(cli.output.stderr).toBe(
      "molmesh: Incorrect or missing API key. (invalid_api_key, HTTP 401, request req_test)\n",
    );
    expect(server.requests[0]).toMatchObject({
      path: "/v1/conversations/conv_01/items",
      authorization: "Bearer sk-molmesh-dev-local",
    });
  });
});
