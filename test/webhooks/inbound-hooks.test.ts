import { createHmac, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";
import { startWebhookReceiver } from "../harness/start-webhook-receiver.ts";

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
type Scheme = "standard" | "github" | "slack";

let mesh: TestMesh;
let receiver: Receiver;
const endpoints = new Map<Scheme, { id: string; inboundSecret: string }>();

const GITHUB_SECRET = "github-shared-secret-0123";
const SLACK_SECRET = "slack-signing-secret-0123";
const SETTINGS = {
  standard: { thread_key: "/thread", text_key: "/text" },
  github: { thread_key: "/issue/number", text_key: "/comment/body", secret: GITHUB_SECRET },
  slack: { thread_key: "/event/thread_ts", text_key: "/event/text", secret: SLACK_SECRET },
};

beforeAll(async () => {
  mesh = await startTestMesh({ edgeVars: { MOL_WEBHOOK_ALLOW_LOOPBACK: "true" } });
  receiver = await startWebhookReceiver();
  for (const scheme of ["standard", "github", "slack"] as const) {
    const response = await mesh.api("/v1/webhook_endpoints", {
      method: "POST",
      json: {
        url: receiver.url,
        events: ["conversation.turn.completed"],
        inbound: { scheme, ...SETTINGS[scheme] },
      },
    });
    expect(response.status).toBe(200);
    const created = (await response.json()) as { id: string; inbound_secret?: string };
    const inboundSecret = scheme === "standard" ? (created.inbound_secret ?? "") : SETTINGS[scheme].secret;
    endpoints.set(scheme, { id: created.id, inboundSecret });
  }
}, 180_000);
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await mesh?.stop();
  await receiver?.close();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const hmacHex = (secret: string, text: string) => createHmac("sha256", secret).update(text).digest("hex");
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** What each sender puts on the wire for `body`, signed with `secret` at `timestamp`. */
function signAs(
  scheme: Scheme,
  body: string,
  options: { secret: string; id: string; timestamp?: number },
): Record<string, string> {
  const timestamp = options.timestamp ?? nowSeconds();
  switch (scheme) {
    case "standard":
      return {
        "webhook-id": options.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": new Webhook(options.secret).sign(options.id, new Date(timestamp * 1000), body),
      };
    case "github":
      return {
        "x-github-delivery": options.id,
        "x-github-event": "issue_comment",
        "x-hub-signature-256": `sha256=${hmacHex(options.secret, body)}`,
      };
    case "slack":
      return {
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": `v0=${hmacHex(options.secret, `v0:${timestamp}:${body}`)}`,
      };
  }
}

function payloadFor(scheme: Scheme, thread: string, text: string, id: string): unknown {
  if (scheme === "standard") return { thread, text };
  if (scheme === "github")
    return { action: "created", issue: { number: Number(thread) }, comment: { body: text } };
  return { type: "event_callback", event_id: id, event: { type: "message", thread_ts: thread, text } };
}

async function deliver(
  scheme: Scheme,
  body: string,
  options: { id?: string; secret?: string; timestamp?: number; headers?: Record<string, string> } = {},
) {
  const endpoint = endpoints.get(scheme);
  if (!endpoint) throw new Error(`no ${scheme} endpoint`);
  const id = options.id ?? randomUUID();
  const signed = signAs(scheme, body, { secret: options.secret ?? endpoint.inboundSecret, id, ...options });
  return fetch(`${mesh.edge.url}/v1/hooks/${endpoint.id}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...signed, ...options.headers },
    body,
  });
}

async function conversationCount(): Promise<number> {
  const response = await mesh.api("/v1/conversations?limit=100");
  return ((await response.json()) as { data: unknown[] }).data.length;
}

describe.each(["standard", "github", "slack"] as const)("inbound %s webhooks", (scheme) => {
  it("acknowledges with 202, runs the turn and delivers its answer through the outbound webhook", async () => {
    const id = randomUUID();
    const thread = String(1000 + ["standard", "github", "slack"].indexOf(scheme));
    const body = JSON.stringify(payloadFor(scheme, thread, "what can you do?", id));
    const response = await deliver(scheme, body, { id });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { conversation_id: string; turn_id: string };
    await receiver.waitFor((all) => all.some((hook) => hook.body.includes(accepted.turn_id)));
    const event = receiver.received.find((hook) => hook.body.includes(accepted.turn_id));
    const data = (JSON.parse(event?.body ?? "{}") as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({
      conversation_id: accepted.conversation_id,
      user_text: "what can you do?",
      conversation_metadata: { source: "webhook", thread_key: thread },
    });

    // The same delivery again is a replay: refused, and no second turn.
    const replay = await deliver(scheme, body, { id });
    expect(replay.status).toBe(409);
    expect(((await replay.json()) as { error: { code: string } }).error.code).toBe("duplicate_delivery");
  }, 120_000);

  it("refuses bad signatures, stale timestamps, malformed and oversize bodies with 4xx and stores nothing", async () => {
    const before = await conversationCount();
    const id = randomUUID();
    const body = JSON.stringify(payloadFor(scheme, "2000", "hello", id));
    const cases: Array<[Promise<Response>, number, string]> = [
      [
        deliver(scheme, body, {
          id,
          secret: scheme === "standard" ? "whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==" : "wrong-secret-000",
        }),
        401,
        "invalid_signature",
      ],
      [
        fetch(`${mesh.edge.url}/v1/hooks/${endpoints.get(scheme)?.id}`, { method: "POST", body }),
        401,
        "missing_signature",
      ],
      [deliver(scheme, "{not json", { id }), 400, "invalid_json"],
      [deliver(scheme, JSON.stringify({ unrelated: true }), { id }), 422, "missing_thread_key"],
      [deliver(scheme, JSON.stringify({ pad: "x".repeat(300 * 1024) }), { id }), 413, "payload_too_large"],
    ];
    if (scheme !== "github")
      cases.push([deliver(scheme, body, { id, timestamp: nowSeconds() - 600 }), 401, "stale_timestamp"]);
    for (const [pending, status, code] of cases) {
      const response = await pending;
      expect(response.status).toBe(status);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    expect(await conversationCount()).toBe(before);
    // Nothing was recorded under that delivery id: the genuine delivery is still accepted.
    expect((await deliver(scheme, body, { id })).status).toBe(202);
  }, 120_000);
});

describe("inbound webhook routing", () => {
  it("maps one thread key to one conversation", async () => {
    const first = await deliver("standard", JSON.stringify({ thread: "t-42", text: "one" }));
    const second = await deliver("standard", JSON.stringify({ thread: "t-42", text: "two" }));
    const other = await deliver("standard", JSON.stringify({ thread: "t-43", text: "three" }));
    const ids = await Promise.all(
      [first, second, other].map(
        async (r) => ((await r.json()) as { conversation_id: string }).conversation_id,
      ),
    );
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
  }, 60_000);

  it("answers Slack's url_verification challenge", async () => {
    const response = await deliver("slack", JSON.stringify({ type: "url_verification", challenge: "c-123" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: "c-123" });
  });

  it("answers 404 for an unknown endpoint or one without inbound settings, before reading any signature", async () => {
    expect((await fetch(`${mesh.edge.url}/v1/hooks/we_unknown`, { method: "POST", body: "{}" })).status).toBe(
      404,
    );
    const outboundOnly = await mesh.api("/v1/webhook_endpoints", {
      method: "POST",
      json: { url: receiver.url, events: ["conversation.turn.failed"] },
    });
    const { id } = (await outboundOnly.json()) as { id: string };
    expect((await fetch(`${mesh.edge.url}/v1/hooks/${id}`, { method: "POST", body: "{}" })).status).toBe(404);
  });
});
