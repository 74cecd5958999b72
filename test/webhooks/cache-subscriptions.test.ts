import { describe, expect, it } from "vitest";
import { SubscriptionCache, cacheSubscriptions } from "../../workers/src/webhooks/cache-subscriptions.ts";
import type {
  WebhookEndpoint,
  WebhookEndpointStore,
} from "../../workers/src/webhooks/webhook-endpoint-store.ts";

const TTL_MS = 5_000;
const endpoint = { id: "whe_1", tenantId: "t1" } as WebhookEndpoint;

/** One isolate's cache over a store that counts its subscription reads. */
function setUp() {
  let now = 0;
  const state = { reads: 0, endpoints: [] as WebhookEndpoint[] };
  const store = {
    listSubscribed: () => {
      state.reads++;
      return Promise.resolve(state.endpoints);
    },
    create: () => {
      state.endpoints = [endpoint];
      return Promise.resolve();
    },
    update: () => Promise.resolve(undefined),
    rotateSecret: () => Promise.resolve(undefined),
    remove: () => Promise.resolve(false),
  } as unknown as WebhookEndpointStore;
  const cache = new SubscriptionCache(() => now, TTL_MS);
  return {
    state,
    cached: () => cacheSubscriptions(store, cache),
    raw: store,
    advance: (ms: number) => (now += ms),
  };
}

describe("cached webhook subscriptions", () => {
  it("reads once per tenant and type within the TTL, empty lists included, and again after it", async () => {
    const env = setUp();
    for (let i = 0; i < 3; i++)
      expect(await env.cached().listSubscribed("t1", "conversation.turn.completed")).toEqual([]);
    expect(env.state.reads).toBe(1);
    await env.cached().listSubscribed("t1", "conversation.summary.created");
    await env.cached().listSubscribed("t2", "conversation.turn.completed");
    expect(env.state.reads).toBe(3);
    env.advance(TTL_MS);
    await env.cached().listSubscribed("t1", "conversation.turn.completed");
    expect(env.state.reads).toBe(4);
  });

  it("sees an endpoint created through this isolate at once, and one created elsewhere within the TTL", async () => {
    const here = setUp();
    expect(await here.cached().listSubscribed("t1", "conversation.turn.completed")).toEqual([]);
    await here.cached().create(endpoint, { actor: "admin" } as never);
    expect(await here.cached().listSubscribed("t1", "conversation.turn.completed")).toEqual([endpoint]);

    const elsewhere = setUp();
    expect(await elsewhere.cached().listSubscribed("t1", "conversation.turn.completed")).toEqual([]);
    await elsewhere.raw.create(endpoint, { actor: "admin" } as never);
    expect(await elsewhere.cached().listSubscribed("t1", "conversation.turn.completed")).toEqual([]);
    elsewhere.advance(TTL_MS);
    expect(await elsewhere.cached().listSubscribed("t1", "conversation.turn.completed")).toEqual([endpoint]);
  });
});
