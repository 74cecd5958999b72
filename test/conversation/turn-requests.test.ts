import { describe, expect, it } from "vitest";
import {
  startTurnRequestSchema,
  statelessTurnRequestSchema,
} from "../../workers/src/conversation/conversation-rpc.ts";
import {
  STATELESS_TURN_PATH,
  TURN_PATH,
  decodeTurnRequest,
} from "../../workers/src/cloudflare/turn-paths.ts";

const post = (path: string, body: string) =>
  new Request(`https://conversation${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json" },
  });

describe("turn requests as the conversation object decodes them", () => {
  it("keeps only the sampling the client set: the specialist's own settings fill the rest", () => {
    const parsed = startTurnRequestSchema.parse({
      conversationId: "conv_1",
      text: "hi",
      sampling: { temperature: 0 },
    });
    expect(parsed.sampling).toEqual({ temperature: 0 });
  });

  it("decodes both entry points", async () => {
    expect(
      await decodeTurnRequest(post(TURN_PATH, JSON.stringify({ conversationId: "c", text: "hi" }))),
    ).toEqual({
      kind: "stored",
      request: { conversationId: "c", text: "hi" },
    });
    const stateless = {
      tenantId: "t",
      conversationKey: "chat_1",
      messages: [{ role: "user", content: "hi" }],
    };
    expect(await decodeTurnRequest(post(STATELESS_TURN_PATH, JSON.stringify(stateless)))).toEqual({
      kind: "stateless",
      request: stateless,
    });
  });

  it("answers 400 for a body that is not a turn request and 404 for another path", async () => {
    for (const body of [
      "not json",
      JSON.stringify({ text: "no conversation" }),
      JSON.stringify({ conversationId: "c", text: 3 }),
    ]) {
      expect(await decodeTurnRequest(post(TURN_PATH, body))).toMatchObject({ kind: "invalid", status: 400 });
    }
    expect(
      statelessTurnRequestSchema.safeParse({
        tenantId: "t",
        conversationKey: "k",
        messages: [{ role: "tool", content: "" }],
      }).success,
    ).toBe(false);
    expect(await decodeTurnRequest(post("/elsewhere", "{}"))).toMatchObject({ kind: "invalid", status: 404 });
  });
});
