import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import type { AppDeps, AppEnv } from "../../workers/src/app/app-deps.ts";
import { STATELESS_OBJECTS, startStatelessTurn } from "../../workers/src/app/start-stateless-turn.ts";
import type { ConversationHandle } from "../../workers/src/core/conversation-core.ts";
import type { StatelessTurnRequest } from "../../workers/src/conversation/conversation-rpc.ts";

/** Records which object each stateless turn went to and what it asked of it. */
function recordingContext(tenantId = "tenant_a") {
  const calls: Array<{ object: string; request: StatelessTurnRequest }> = [];
  let next = 0;
  const deps = {
    newId: (prefix: string) => `${prefix}_${++next}`,
    conversations: (tenant: string, object: string) =>
      ({
        startStatelessTurn: (request: StatelessTurnRequest) => {
          calls.push({ object: `${tenant}:${object}`, request });
          return Promise.resolve({ ok: true, stream: new ReadableStream() });
        },
      }) as unknown as ConversationHandle,
  } as unknown as AppDeps;
  const c = { var: { deps, tenantId, principal: { keyId: "key_test" } } } as unknown as Context<AppEnv>;
  return { c, calls };
}

const messages = [
  { role: "system" as const, content: "be brief" },
  { role: "user" as const, content: "hello" },
];

describe("stateless turns at scale", () => {
  it("never share a KV slot, nor pile onto one object, for independent requests with the same opening", async () => {
    const { c, calls } = recordingContext();
    for (let i = 0; i < 256; i++) await startStatelessTurn(c, { messages });
    expect(new Set(calls.map((call) => call.request.conversationKey)).size).toBe(256);
    const perObject = new Map<string, number>();
    for (const { object } of calls) perObject.set(object, (perObject.get(object) ?? 0) + 1);
    // Spread over the pool at random: many objects, none holding more than a small share.
    expect(perObject.size).toBeGreaterThan(STATELESS_OBJECTS / 2);
    expect(Math.max(...perObject.values())).toBeLessThan(256 / 8);
    // The opening still steers them all to the same node.
    expect(new Set(calls.map((call) => call.request.placementKey)).size).toBe(1);
  });

  it("share a KV slot when the client names one (prompt_cache_key or user)", async () => {
    const { c, calls } = recordingContext();
    await startStatelessTurn(c, { messages, cacheKey: "chat-42" });
    await startStatelessTurn(c, { messages: [{ role: "user", content: "other" }], cacheKey: "chat-42" });
    await startStatelessTurn(c, { messages, cacheKey: "chat-43" });
    const [a, b, other] = calls;
    expect(a?.request.conversationKey).toBe(b?.request.conversationKey);
    expect(other?.request.conversationKey).not.toBe(a?.request.conversationKey);
  });

  it("keep tenants apart: one cache key names different slots under different tenants", async () => {
    const first = recordingContext("tenant_a");
    const second = recordingContext("tenant_b");
    await startStatelessTurn(first.c, { messages, cacheKey: "k" });
    await startStatelessTurn(second.c, { messages, cacheKey: "k" });
    expect(first.calls[0]?.request.conversationKey).not.toBe(second.calls[0]?.request.conversationKey);
    expect(first.calls[0]?.request.placementKey).not.toBe(second.calls[0]?.request.placementKey);
  });
});
