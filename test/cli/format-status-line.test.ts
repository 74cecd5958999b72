import { describe, expect, it } from "vitest";
import { formatStatusLine } from "../../infra/cli/format-turns.ts";
import { itemSchema, responseSchema } from "../../infra/cli/mesh-client.ts";
import { molSchema, type TurnMol } from "../../schema/api/mol.ts";
import { formatChatCompletion } from "../../workers/src/api/format/format-chat-completion.ts";
import { formatTurnItems } from "../../workers/src/api/format/format-item.ts";
import { formatResponseObject } from "../../workers/src/api/format/format-response-object.ts";
import { makeTurn } from "../api/turn-fixtures.ts";

const usage = (promptTokens: number, cachedPromptTokens: number) => ({
  promptTokens,
  cachedPromptTokens,
  evaluatedPromptTokens: promptTokens - cachedPromptTokens,
  completionTokens: 3,
});

const FALLBACK = { code: "overloaded" as const, message: "route hop overloaded", to: "default" as const };

/** The edge's own Response for a turn, read back through the CLI's schema. */
function readResponse(turn = makeTurn()) {
  return responseSchema.parse(JSON.parse(JSON.stringify(formatResponseObject(turn))));
}

describe("formatStatusLine", () => {
  it("reads the edge's mol object as it is, every field kept", () => {
    const mol = makeTurn().mol;
    expect(molSchema.parse(mol)).toEqual(mol);
  });

  it("reads the Response, chat completion and items the edge formats with the one mol schema", () => {
    const turn = makeTurn({ mol: { ...makeTurn().mol, source: "fallback", fallback: FALLBACK } });
    const typed: TurnMol = molSchema.parse(JSON.parse(JSON.stringify(formatChatCompletion(turn).mol)));
    expect(typed.fallback?.to).toBe("default");
    expect(readResponse(turn).mol?.source).toBe("fallback");
    const [, assistant] = formatTurnItems(turn);
    expect(itemSchema.parse(JSON.parse(JSON.stringify(assistant))).mol?.label).toBe("coding");
  });

  it("passes on a fact a newer mesh adds, and refuses a mol that breaks the contract", () => {
    const formatted = formatResponseObject(makeTurn());
    const response: unknown = JSON.parse(
      JSON.stringify({ ...formatted, mol: { ...formatted.mol, newFact: 7 } }),
    );
    expect(responseSchema.parse(response).mol).toMatchObject({ newFact: 7, label: "coding" });
    expect(molSchema.safeParse({ ...makeTurn().mol, source: "guessed" }).success).toBe(false);
    expect(molSchema.safeParse({ ...makeTurn().mol, label: undefined }).success).toBe(false);
  });

  it("rounds the cached shares of the answer hop and of the turn (route + answer)", () => {
    const turn = makeTurn();
    turn.mol = { ...turn.mol, usage: { route: usage(1, 0), answer: usage(3, 2) } };

    expect(formatStatusLine(readResponse(turn))).toBe(
      "── coding · router · rev rev1 · route 5ms · first token 9ms · answer 40ms · answer 2/3 cached (67%) · turn 2/4 cached (50%)",
    );
  });

  it("shows n/a for an empty prompt, a shortened revision, and why an answer is incomplete", () => {
    const turn = makeTurn({ finishReason: "length" });
    turn.mol = {
      ...turn.mol,
      revision: "sha256-0123456789abcdef",
      timings: { routeMs: 1.4 },
      usage: { answer: usage(0, 0) },
    };

    expect(formatStatusLine(readResponse(turn))).toBe(
      "── coding · router · rev sha256-01234 · route 1ms · answer 0/0 cached (n/a) · turn 0/0 cached (n/a) · incomplete (max_output_tokens)",
    );
  });

  it("shows the route confidence, and the router's label when the low-confidence rule kept the previous one", () => {
    const turn = makeTurn();
    turn.mol = {
      ...turn.mol,
      timings: {},
      usage: {},
      route: { confidence: 0.4166, lowConfidenceLabel: "chat" },
    };
    expect(readResponse(turn).mol?.route?.confidence).toBe(0.4166);
    expect(formatStatusLine(readResponse(turn))).toMatch(
      /^── coding · router · p 0\.42 · kept previous over chat · /,
    );
  });

  it("still prints a line for a server that sends no mol object", () => {
    expect(formatStatusLine({ id: "resp_1", status: "completed", usage: null })).toBe("── no mol facts");
  });
});
