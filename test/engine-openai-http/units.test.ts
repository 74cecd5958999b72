import { describe, expect, it } from "vitest";
import { buildChoiceGrammar } from "../../gpu-nodes/src/engine/engine.ts";
import { readErrorBody } from "../../gpu-nodes/src/engine/openai-http/engine-http-client.ts";
import { createRecentConversations } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";

describe("buildChoiceGrammar", () => {
  it("builds an alternation of escaped GBNF literals", () => {
    expect(buildChoiceGrammar(["chat", "agent"])).toBe('root ::= "chat" | "agent"');
    expect(buildChoiceGrammar(['a"b', "c\\d", "e\nf", "\u0001"])).toBe(
      'root ::= "a\\"b" | "c\\\\d" | "e\\nf" | "\\x01"',
    );
  });

  it("refuses an empty choice list", () => {
    expect(() => buildChoiceGrammar([])).toThrow(RangeError);
  });
});

describe("createRecentConversations", () => {
  it("keeps the most recent first and evicts the least recently served", () => {
    const recent = createRecentConversations(3);
    for (const id of ["a", "b", "c", "a", "d"]) recent.touch(id);
    expect(recent.list()).toEqual(["d", "a", "c"]);
  });
});

describe("readErrorBody", () => {
  it("reads nested, flat (older vLLM), FastAPI and plain-text bodies", () => {
    expect(
      readErrorBody('{"error":{"message":"m","type":"BadRequestError","param":null,"code":400}}'),
    ).toEqual({
      message: "m",
      type: "BadRequestError",
      code: 400,
    });
    expect(readErrorBody('{"object":"error","message":"flat","type":"NotFoundError","code":404}')).toEqual({
      message: "flat",
      type: "NotFoundError",
      code: 404,
    });
    expect(readErrorBody('{"detail":"Not Found"}')).toEqual({ message: "Not Found" });
    expect(readErrorBody("<html>502 Bad Gateway</html>")).toEqual({
      message: "<html>502 Bad Gateway</html>",
    });
  });
});
