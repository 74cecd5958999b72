import { describe, expect, it } from "vitest";
import { formatConversation } from "../../workers/src/api/format/format-conversation.ts";
import { formatTurnItems } from "../../workers/src/api/format/format-item.ts";
import { formatItemList } from "../../workers/src/api/format/format-item-list.ts";
import { errorResponse, jsonResponse, makeMeshTurn } from "./mesh-fixtures.ts";
import { runCliInMemory } from "./run-cli-in-memory.ts";

const CONVERSATIONS = [
  formatConversation({ id: "conv_b", createdAt: 1_700_000_100, metadata: { project: "demo", owner: "ana" } }),
  formatConversation({ id: "conv_a", createdAt: 1_700_000_000 }),
];

function makeItems() {
  const first = makeMeshTurn(1, "def f():\n    return 1");
  first.userText = "write a python function";
  first.mol = {
    ...first.mol,
    summary: { status: "ready", text: "The user asked for a function; gave f()." },
  };
  const second = makeMeshTurn(2, "Hi", { status: "completed", finishReason: "length" });
  second.userText = "hi";
  second.mol = {
    ...second.mol,
    label: "chat",
    source: "fallback",
    fallback: { code: "deadline_exceeded", message: "route timed out", to: "previous" },
  };
  return [...formatTurnItems(first), ...formatTurnItems(second)];
}

describe("molmesh conversations", { timeout: 10_000 }, () => {
  it("prints one line per conversation, sends the paging flags, and points at the next page", async () => {
    const run = await runCliInMemory({
      argv: ["conversations", "--limit", "2", "--order", "desc", "--after", "conv_c"],
      handle: () => jsonResponse(formatItemList(CONVERSATIONS, { hasMore: true })),
    });

    expect(run.code).toBe(0);
    expect(run.requests[0]?.path).toBe("/v1/conversations?limit=2&after=conv_c&order=desc");
    expect(run.stdout).toBe(
      'conv_b  2023-11-14T22:15:00Z  project="demo" owner="ana"\nconv_a  2023-11-14T22:13:20Z\n',
    );
    expect(run.stderr).toBe("more: molmesh conversations --after conv_a\n");
  });

  it("--json prints the list object as the mesh sent it", async () => {
    const list = formatItemList(CONVERSATIONS, { hasMore: false });
    const run = await runCliInMemory({ argv: ["conversations", "--json"], handle: () => jsonResponse(list) });

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(list);
  });

  it("says so when there are none", async () => {
    const run = await runCliInMemory({
      argv: ["conversations"],
      handle: () => jsonResponse(formatItemList([], { hasMore: false })),
    });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe("no conversations\n");
  });
});

describe("molmesh items", { timeout: 10_000 }, () => {
  it("prints each item with its role and, for assistant items, the mol facts and summary", async () => {
    const run = await runCliInMemory({
      argv: ["items", "conv_01", "--order", "asc", "-n", "4"],
      handle: () => jsonResponse(formatItemList(makeItems(), { hasMore: false })),
    });

    expect(run.code).toBe(0);
    expect(run.requests[0]?.path).toBe("/v1/conversations/conv_01/items?limit=4&order=asc");
    expect(run.stdout).toBe(
      [
        "msg_u1 · user",
        "  write a python function",
        "",
        "msg_a1 · assistant · coding · router · answer 150/200 cached (75%) · summary ready",
        "  def f():",
        "      return 1",
        "  summary: The user asked for a function; gave f().",
        "",
        "msg_u2 · user",
        "  hi",
        "",
        "msg_a2 · assistant · incomplete · chat · fallback(deadline_exceeded→previous) · answer 150/200 cached (75%) · summary pending",
        "  Hi",
        "",
      ].join("\n"),
    );
  });

  it("--json prints the list object, mol included", async () => {
    const list = formatItemList(makeItems(), { hasMore: true });
    const run = await runCliInMemory({
      argv: ["items", "conv_01", "--json"],
      handle: () => jsonResponse(list),
    });

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(list);
  });

  it("escapes the conversation id in the path and points at the next page", async () => {
    const run = await runCliInMemory({
      argv: ["items", "conv/../x", "--order", "asc"],
      handle: () => jsonResponse(formatItemList(makeItems().slice(0, 1), { hasMore: true })),
    });

    expect(run.requests[0]?.path).toBe("/v1/conversations/conv%2F..%2Fx/items?order=asc");
    expect(run.stderr).toBe("more: molmesh items conv/../x --order asc --after msg_u1\n");
  });

  it("turns the API's error envelope into one line and exit code 1", async () => {
    const run = await runCliInMemory({
      argv: ["items", "conv_gone"],
      handle: () =>
        errorResponse({
          status: 404,
          type: "invalid_request_error",
          code: "conversation_not_found",
          message: "No conversation found with id 'conv_gone'.",
        }),
    });

    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      "molmesh: No conversation found with id 'conv_gone'. (conversation_not_found, HTTP 404, request req_test)\n",
    );
  });

  it("refuses a 200 whose body is not an item list (a wrong base URL) with exit code 1", async () => {
    const run = await runCliInMemory({
      argv: ["items", "conv_01"],
      handle: () => jsonResponse({ hello: "world" }),
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^molmesh: unexpected item list from the server at object: /);
  });
});
