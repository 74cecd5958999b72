import type { Context } from "hono";
import { canonicalizeJson } from "../../../schema/harness/content-hash.ts";
import type { StartTurnResult, StatelessTurnRequest } from "../conversation/conversation-rpc.ts";
import type { AppEnv } from "./app-deps.ts";
import { hashRequestBody } from "./read-idempotency-key.ts";
import { readUsageAttribution } from "./read-usage-attribution.ts";

export type StatelessTurnInput = Pick<
  StatelessTurnRequest,
  "messages" | "forcedLabel" | "sampling" | "apiOrigin" | "tools" | "constraint" | "harnessPin"
> & {
  /** The request's `safety_identifier`, else its `user`: whose usage this is (see read-usage-attribution.ts). */
  endUser?: string | undefined;
  /** The client's `prompt_cache_key`, else its `user`: the turns it names share a KV slot on purpose. */
  cacheKey?: string | undefined;
};

/**
 * Objects a tenant's stateless turns spread over at random: enough that no one object is a hot spot (its turns run
 * side by side, never queued), few enough that each keeps its NATS connection warm between requests.
 */
export const STATELESS_OBJECTS = 64;

/**
 * A turn nothing is stored for (`/v1/chat/completions`, `store: false`). Requests go to one of
 * {@link STATELESS_OBJECTS} objects at random, not to one chosen by their content, so requests that open the same
 * way never pile onto one object. The node's KV slot is the client's cache key when it sent one, else the
 * request's own (so they never queue for one slot); the hash of the opening messages (system + first user
 * message) only steers which node it prefers, so a chat that grows still lands where its prefix is warm.
 */
export async function startStatelessTurn(
  c: Context<AppEnv>,
  input: StatelessTurnInput,
): Promise<StartTurnResult> {
  const { deps, tenantId } = c.var;
  const { messages } = input;
  const opening = messages.slice(0, messages.findIndex((m) => m.role === "user") + 1);
  const placementKey = `chat_${(await hashRequestBody({ tenant: tenantId, opening: canonicalizeJson(opening) })).slice(0, 32)}`;
  const requestId = deps.newId("chat");
  const conversationKey =
    input.cacheKey === undefined
      ? requestId
      : `chat_${(await hashRequestBody({ tenant: tenantId, cacheKey: input.cacheKey })).slice(0, 32)}`;
  const shard = Number.parseInt((await hashRequestBody(requestId)).slice(0, 8), 16) % STATELESS_OBJECTS;
  return deps.conversations(tenantId, `stateless_${shard}`).startStatelessTurn({
    tenantId,
    conversationKey,
    placementKey,
    messages,
    ...(input.forcedLabel === undefined ? {} : { forcedLabel: input.forcedLabel }),
    ...(input.sampling === undefined ? {} : { sampling: input.sampling }),
    ...(input.apiOrigin === undefined ? {} : { apiOrigin: input.apiOrigin }),
    attribution: readUsageAttribution(c, input.endUser),
    ...(input.tools === undefined || input.tools.length === 0 ? {} : { tools: input.tools }),
    ...(input.constraint === undefined ? {} : { constraint: input.constraint }),
    ...(input.harnessPin === undefined ? {} : { harnessPin: input.harnessPin }),
  });
}
