import type { Context } from "hono";
import { canonicalizeJson } from "../../../schema/harness/content-hash.ts";
import type { StartTurnResult, StatelessTurnRequest } from "../conversation/conversation-rpc.ts";
import type { AppEnv } from "./app-deps.ts";
import { hashRequestBody } from "./read-idempotency-key.ts";

export type StatelessTurnInput = Pick<StatelessTurnRequest, "messages" | "forcedLabel" | "sampling"> & {
  /** The client's `prompt_cache_key`, else its `user`: the turns it names share a KV slot on purpose. */
  cacheKey?: string | undefined;
};

/**
 * A turn nothing is stored for (`/v1/chat/completions`, `store: false`). Each request runs in an object of its
 * own, so independent requests never wait for each other or meet in one object. The node's KV slot is the
 * client's cache key when it sent one, else the request's own; the hash of the opening messages (system + first
 * user message) only steers which node it prefers, so a chat that grows still lands where its prefix is warm.
 */
export async function startStatelessTurn(
  c: Context<AppEnv>,
  input: StatelessTurnInput,
): Promise<StartTurnResult> {
  const { deps, tenantId } = c.var;
  const { messages } = input;
  const opening = messages.slice(0, messages.findIndex((m) => m.role === "user") + 1);
  const placementKey = `chat_${(await hashRequestBody({ tenant: tenantId, opening: canonicalizeJson(opening) })).slice(0, 32)}`;
  const conversationKey =
    input.cacheKey === undefined
      ? deps.newId("chat")
      : `chat_${(await hashRequestBody({ tenant: tenantId, cacheKey: input.cacheKey })).slice(0, 32)}`;
  return deps.conversations(tenantId, deps.newId("stateless")).startStatelessTurn({
    tenantId,
    conversationKey,
    placementKey,
    messages,
    ...(input.forcedLabel === undefined ? {} : { forcedLabel: input.forcedLabel }),
    ...(input.sampling === undefined ? {} : { sampling: input.sampling }),
  });
}
