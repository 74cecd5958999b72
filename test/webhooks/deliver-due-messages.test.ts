import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { deliverDueMessages, type DeliveryDeps } from "../../workers/src/webhooks/deliver-due-messages.ts";
import {
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_SCHEDULE_MS,
} from "../../workers/src/webhooks/plan-webhook-retry.ts";
import type { WebhookEndpoint } from "../../workers/src/webhooks/webhook-endpoint-store.ts";
import { createMemoryWebhookQueue } from "./memory-webhook-queue.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD_SECRET = "whsec_b2xkLXNlY3JldC1vbGQtc2VjcmV0LTAxMjM0NTY=";
/** Near the wall clock: the standardwebhooks verifier checks the signed timestamp against Date.now(). */
const T0 = Math.floor(Date.now() / 1000) * 1000;

function endpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    ...{ id: "we_1", tenantId: "ten_1", url: "https://hooks.example.com/in", description: "" },
    ...{ events: ["conversation.turn.completed"], status: "enabled", disabledReason: null, secret: SECRET },
    ...{ previousSecret: null, previousSecretExpiresAt: null, inbound: null, createdAt: 0, updatedAt: 0 },
    ...overrides,
  };
}

/** A receiver answering each request from `statuses` in turn (then 200), recording what it got. */
function setup(
  statuses: Array<number | "network_error">,
  options: { endpoint?: WebhookEndpoint; headers?: Record<string, string> } = {},
) {
  let clock = T0;
  const queue = createMemoryWebhookQueue();
  const requests: Array<{ url: string; init: RequestInit }> = [];
  const disabled: string[] = [];
  const deps: DeliveryDeps = {
    queue,
    readEndpoint: () => Promise.resolve(options.endpoint ?? endpoint()),
    disableEndpoint: (_endpoint, reason) => {
      disabled.push(reason);
      return Promise.resolve();
    },
    fetch: (url, init) => {
      requests.push({
        url: typeof url === "string" ? url : url instanceof URL ? url.href : url.url,
        init: init ?? {},
      });
      const status = statuses.shift() ?? 200;
      if (status === "network_error") return Promise.reject(new TypeError("fetch failed"));
      return Promise.resolve(new Response(null, { status, headers: options.headers ?? {} }));
    },
    now: () => clock,
    random: () => 0.5,
    timeoutMs: 1_000,
    compression: 1,
    urlPolicy: {},
  };
  queue.enqueue({ id: "msg_1", eventType: "conversation.turn.completed", body: '{"type":"x"}', now: T0 });
  return { queue, deps, requests, disabled, advanceTo: (at: number) => void (clock = at) };
}

describe("deliverDueMessages", () => {
  it("delivers on a 2xx, signing the exact body with the endpoint's secret", async () => {
    const { queue, deps, requests } = setup([204]);
    expect(await deliverDueMessages(deps)).toBeUndefined();
    expect(queue.get("msg_1")).toMatchObject({ status: "delivered", attempts: 1, lastStatusCode: 204 });
    const headers = requests[0]?.init.headers as Record<string, string>;
    expect(headers["webhook-id"]).toBe("msg_1");
    expect(() => new Webhook(SECRET).verify('{"type":"x"}', headers)).not.toThrow();
    expect(requests[0]?.init.redirect).toBe("manual");
  });

  it("walks the whole retry schedule, then dead-letters, keeping the message id", async () => {
    const failures = Array.from({ length: WEBHOOK_MAX_ATTEMPTS }, () => 500);
    const { queue, deps, requests, advanceTo } = setup(failures);
    let next = await deliverDueMessages(deps);
    for (let attempt = 1; attempt < WEBHOOK_MAX_ATTEMPTS; attempt++) {
      const previous = queue.attempts.at(-1);
      // random() = 0.5 means no jitter: exactly the schedule's next step after the attempt that just ended.
      expect(next).toBe((previous?.startedAt ?? 0) + (WEBHOOK_RETRY_SCHEDULE_MS[attempt] ?? NaN));
      advanceTo(next ?? 0);
      next = await deliverDueMessages(deps);
    }
    expect(next).toBeUndefined();
    expect(queue.get("msg_1")).toMatchObject({ status: "dead", attempts: WEBHOOK_MAX_ATTEMPTS });
    expect(new Set(requests.map((r) => (r.init.headers as Record<string, string>)["webhook-id"]))).toEqual(
      new Set(["msg_1"]),
    );
    expect(queue.attempts.map((a) => a.outcome)).toEqual([
      ...Array.from({ length: WEBHOOK_MAX_ATTEMPTS - 1 }, () => "retry"),
      "dead",
    ]);
  });

  it("honours retry-after on a 503 when it asks for longer than the schedule", async () => {
    const { deps } = setup([503], { headers: { "retry-after": "120" } });
    expect(await deliverDueMessages(deps)).toBe(T0 + 120_000);
  });

  it("backs off a network error and records it", async () => {
    const { queue, deps } = setup(["network_error"]);
    expect(await deliverDueMessages(deps)).toBe(T0 + 5_000);
    expect(queue.get("msg_1")).toMatchObject({
      status: "pending",
      lastError: "network_error",
      lastStatusCode: null,
    });
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    const { queue, deps } = setup([301]);
    await deliverDueMessages(deps);
    expect(queue.get("msg_1")?.status).toBe("pending");
  });

  it("disables the endpoint on 410 and drops what else was queued", async () => {
    const { queue, deps, disabled } = setup([410]);
    queue.enqueue({ id: "msg_2", eventType: "conversation.turn.completed", body: "{}", now: T0 + 1 });
    expect(await deliverDueMessages(deps)).toBeUndefined();
    expect(disabled).toEqual(["gone"]);
    expect(queue.get("msg_1")?.status).toBe("dead");
    expect(queue.get("msg_2")).toMatchObject({ status: "dead", lastError: "endpoint_disabled:gone" });
  });

  it("sends nothing to a disabled endpoint", async () => {
    const { queue, deps, requests } = setup([], {
      endpoint: endpoint({ status: "disabled", disabledReason: "manual" }),
    });
    await deliverDueMessages(deps);
    expect(requests).toHaveLength(0);
    expect(queue.get("msg_1")?.status).toBe("dead");
  });

  it("signs with both secrets while a rotation's grace runs, and with the new one after", async () => {
    const rotating = endpoint({ previousSecret: OLD_SECRET, previousSecretExpiresAt: T0 / 1000 + 60 });
    const during = setup([], { endpoint: rotating });
    await deliverDueMessages(during.deps);
    const both = during.requests[0]?.init.headers as Record<string, string>;
    expect(both["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(() => new Webhook(OLD_SECRET).verify('{"type":"x"}', both)).not.toThrow();

    const after = setup([], { endpoint: { ...rotating, previousSecretExpiresAt: T0 / 1000 - 1 } });
    await deliverDueMessages(after.deps);
    const one = after.requests[0]?.init.headers as Record<string, string>;
    expect(one["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(() => new Webhook(OLD_SECRET).verify('{"type":"x"}', one)).toThrow();
  });

  it("refuses to send to a URL the SSRF guard rejects, even if it was stored", async () => {
    const { queue, deps, requests } = setup([], { endpoint: endpoint({ url: "http://10.1.2.3/hook" }) });
    await deliverDueMessages(deps);
    expect(requests).toHaveLength(0);
    expect(queue.get("msg_1")).toMatchObject({ status: "pending", lastError: "url_forbidden_host" });
  });
});
