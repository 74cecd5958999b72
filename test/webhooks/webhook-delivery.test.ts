import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";
import { queryLocalD1 } from "../harness/query-local-d1.ts";
import { startWebhookReceiver, type ReceivedWebhook } from "../harness/start-webhook-receiver.ts";

/** 0.0002 × the Standard Webhooks schedule: retries after ~0 ms, 60 ms, 360 ms, 1.4 s, 3.6 s, 7.2 s, … (~55 s in all). */
const COMPRESSION = "0.0002";
/** Seals signing secrets in D1, as production does; every delivery below is signed with secrets read back from it. */
const SECRET_KEY = btoa(String.fromCharCode(...new Uint8Array(32).map((_, i) => 255 - i)));
const ALL_EVENTS = [
  "conversation.turn.completed",
  "conversation.turn.failed",
  "conversation.summary.created",
];

let mesh: TestMesh;

beforeAll(async () => {
  mesh = await startTestMesh({
    adminToken: TEST_ADMIN_TOKEN,
    edgeVars: {
      MOL_WEBHOOK_ALLOW_LOOPBACK: "true",
      MOL_WEBHOOK_RETRY_COMPRESSION: COMPRESSION,
      MOL_WEBHOOK_SECRET_KEY: SECRET_KEY,
    },
  });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

type Endpoint = { id: string; secret: string; status: string; disabled_reason: string | null };

async function createEndpoint(url: string, events = ALL_EVENTS): Promise<Endpoint> {
  const response = await mesh.api("/v1/webhook_endpoints", { method: "POST", json: { url, events } });
  expect(response.status).toBe(200);
  return (await response.json()) as Endpoint;
}

async function runTurn(input = "hello there"): Promise<string> {
  const created = await mesh.api("/v1/conversations", { method: "POST", json: {} });
  const conversation = ((await created.json()) as { id: string }).id;
  const response = await mesh.api("/v1/responses", {
    method: "POST",
    json: { conversation, input, max_output_tokens: 8 },
  });
  expect(response.status).toBe(200);
  return conversation;
}

const typeOf = (hook: ReceivedWebhook) => (JSON.parse(hook.body) as { type: string }).type;
const idOf = (hook: ReceivedWebhook) => String(hook.headers["webhook-id"]);
const headersOf = (hook: ReceivedWebhook) => ({
  "webhook-id": idOf(hook),
  "webhook-timestamp": String(hook.headers["webhook-timestamp"]),
  "webhook-signature": String(hook.headers["webhook-signature"]),
});
function at<T>(list: readonly T[], index: number): T {
  const value = list.at(index);
  if (value === undefined) throw new Error(`nothing at ${index}`);
  return value;
}

const conversationOf = (hook: ReceivedWebhook) =>
  (JSON.parse(hook.body) as { data: { conversation_id: string } }).data.conversation_id;

describe("outbound webhooks", () => {
  it("retries failed deliveries until accepted, with one webhook-id and a verifiable signature", async () => {
    // The first three requests fail (500, 503 with retry-after, a 429), everything after is accepted.
    const receiver = await startWebhookReceiver(({ index }) =>
      index === 0
        ? { status: 500 }
        : index === 1
          ? { status: 503, headers: { "retry-after": "1" } }
          : index === 2
            ? { status: 429 }
            : { status: 200 },
    );
    const endpoint = await createEndpoint(receiver.url);
    expect(endpoint.secret).toMatch(/^whsec_/);
    const conversation = await runTurn();
    const accepted = (type: string) => (all: ReceivedWebhook[]) =>
      all.some((hook) => hook.status === 200 && typeOf(hook) === type);
    await receiver.waitFor(accepted("conversation.turn.completed"));
    await receiver.waitFor(accepted("conversation.summary.created"));

    const verifier = new Webhook(endpoint.secret);
    for (const hook of receiver.received) {
      expect(() => verifier.verify(hook.body, headersOf(hook))).not.toThrow();
      expect(conversationOf(hook)).toBe(conversation);
    }
    const completed = receiver.received.filter((hook) => typeOf(hook) === "conversation.turn.completed");
    expect(new Set(completed.map(idOf)).size).toBe(1);
    expect(new Set(completed.map((hook) => hook.body)).size).toBe(1);
    expect(completed.at(-1)?.status).toBe(200);
    const payload = JSON.parse(completed[0]?.body ?? "{}") as {
      data: { answer: string; route: { label: string }; adapter: string; usage: { answer: unknown } };
    };
    expect(typeof payload.data.answer).toBe("string");
    expect(payload.data.route.label).toMatch(/^(chat|agent|coding|genui)$/);
    expect(payload.data.usage.answer).toBeDefined();

    const log = await mesh.api(`/v1/webhook_endpoints/${endpoint.id}/deliveries`);
    const deliveries = (await log.json()) as {
      data: Array<{ id: string; status: string; attempt_count: number }>;
    };
    expect(deliveries.data.map((d) => d.status)).toEqual(["delivered", "delivered"]);
    const first = deliveries.data.find((d) => d.id === idOf(at(completed, 0)));
    expect(first?.attempt_count).toBe(completed.length);
    const detail = await mesh.api(`/v1/webhook_endpoints/${endpoint.id}/deliveries/${first?.id}`);
    const attempts = ((await detail.json()) as { attempts: Array<{ status_code: number }> }).attempts;
    expect(attempts.map((a) => a.status_code)).toEqual(completed.map((hook) => hook.status));

    // Manual redelivery sends the same message again, same webhook-id and body.
    const redeliver = await mesh.api(
      `/v1/webhook_endpoints/${endpoint.id}/deliveries/${first?.id}/redeliver`,
      {
        method: "POST",
      },
    );
    expect(redeliver.status).toBe(202);
    const before = completed.length;
    await receiver.waitFor((all) => all.filter((hook) => idOf(hook) === first?.id).length > before);
    const again = receiver.received.filter((hook) => idOf(hook) === first?.id).at(-1);
    expect(again?.body).toBe(completed[0]?.body);
    await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
    await receiver.close();
  }, 120_000);

  it("disables an endpoint that answers 410 and sends it nothing more", async () => {
    const receiver = await startWebhookReceiver(() => ({ status: 410 }));
    const endpoint = await createEndpoint(receiver.url, ["conversation.turn.completed"]);
    await runTurn();
    await receiver.waitFor((all) => all.length >= 1);
    let current: Endpoint = endpoint;
    for (let i = 0; i < 200 && current.status !== "disabled"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      current = (await (await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`)).json()) as Endpoint;
    }
    expect(current).toMatchObject({ status: "disabled", disabled_reason: "gone" });
    await runTurn();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.received).toHaveLength(1);
    const audit = await mesh.api("/v1/audit_log?limit=100");
    const actions = ((await audit.json()) as { data: Array<{ action: string; target: string }> }).data;
    expect(actions).toContainEqual(
      expect.objectContaining({ action: "webhook_endpoint.disabled", target: endpoint.id }),
    );
    await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
    await receiver.close();
  }, 120_000);

  it("signs with both secrets during a rotation", async () => {
    const receiver = await startWebhookReceiver();
    const endpoint = await createEndpoint(receiver.url, ["conversation.turn.completed"]);
    const rotated = await mesh.api(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, {
      method: "POST",
      json: { grace_seconds: 600 },
    });
    const { secret } = (await rotated.json()) as Endpoint;
    expect(secret).not.toBe(endpoint.secret);
    await runTurn();
    await receiver.waitFor((all) => all.length >= 1);
    const hook = at(receiver.received, 0);
    expect(String(hook.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const key of [secret, endpoint.secret]) {
      expect(() => new Webhook(key).verify(hook.body, headersOf(hook))).not.toThrow();
    }
    await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
    await receiver.close();
  }, 120_000);

  it("loses nothing when the edge restarts between attempts", async () => {
    const receiver = await startWebhookReceiver(() => ({ status: 503 }));
    const endpoint = await createEndpoint(receiver.url, ["conversation.turn.completed"]);
    await runTurn();
    await receiver.waitFor((all) => all.length >= 2);
    await mesh.restartEdge();
    const failedBefore = receiver.received.length;
    receiver.setReply(() => ({ status: 200 }));
    await receiver.waitFor((all) => all.some((hook) => hook.status === 200), 90_000);
    expect(receiver.received.length).toBeGreaterThan(failedBefore);
    expect(new Set(receiver.received.map(idOf)).size).toBe(1);
    expect(() =>
      new Webhook(endpoint.secret).verify(
        at(receiver.received, -1).body,
        headersOf(at(receiver.received, -1)),
      ),
    ).not.toThrow();
    await receiver.close();
  }, 180_000);
});

describe("webhook endpoint API", () => {
  it("documents the webhook paths in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${mesh.edge.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    for (const path of [
      "/v1/webhook_endpoints",
      "/v1/webhook_endpoints/{id}/rotate_secret",
      "/v1/hooks/{id}",
    ]) {
      expect(doc.paths).toHaveProperty([path]);
    }
  });

  it("needs the webhooks scope, which a new key gets only when asked for", async () => {
    const admin = (path: string, json: unknown) =>
      fetch(`${mesh.edge.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(json),
      }).then((r) => r.json() as Promise<{ id: string; key: string }>);
    const tenant = await admin("/v1/admin/tenants", { name: "hooks" });
    const plain = await admin(`/v1/admin/tenants/${tenant.id}/keys`, {});
    const hooks = await admin(`/v1/admin/tenants/${tenant.id}/keys`, { scopes: ["webhooks"] });
    const list = (key: string) =>
      fetch(`${mesh.edge.url}/v1/webhook_endpoints`, { headers: { authorization: `Bearer ${key}` } });
    expect((await list(plain.key)).status).toBe(403);
    const allowed = await list(hooks.key);
    expect(allowed.status).toBe(200);
    // Another tenant sees none of the dev tenant's endpoints.
    expect(((await allowed.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it("refuses private, loopback-less and non-http URLs and unknown events with 400, storing nothing", async () => {
    const before = (await (await mesh.api("/v1/webhook_endpoints")).json()) as { data: unknown[] };
    for (const json of [
      { url: "http://10.0.0.1/x", events: ["conversation.turn.completed"] },
      { url: "http://169.254.169.254/latest", events: ["conversation.turn.completed"] },
      { url: "ftp://example.com/x", events: ["conversation.turn.completed"] },
      { url: "https://example.com/x", events: ["conversation.started"] },
      { url: "https://example.com/x", events: [] },
      {
        url: "https://example.com/x",
        events: ["conversation.turn.completed"],
        inbound: { scheme: "github", thread_key: "/x" },
      },
    ]) {
      const response = await mesh.api("/v1/webhook_endpoints", { method: "POST", json });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe(
        "invalid_request_error",
      );
    }
    const after = (await (await mesh.api("/v1/webhook_endpoints")).json()) as { data: unknown[] };
    expect(after.data).toHaveLength(before.data.length);
  });

  it("stores signing secrets sealed, never as they are", async () => {
    const endpoint = await createEndpoint("https://hooks.example.com/sealed");
    const [row] = await queryLocalD1(
      mesh.persistDir,
      `SELECT secret FROM webhook_endpoints WHERE id = '${endpoint.id}'`,
    );
    expect(String(row?.secret)).toMatch(/^sealed:v1:/);
    expect(String(row?.secret)).not.toContain(endpoint.secret.slice("whsec_".length));
  }, 60_000);

  it("lists, updates and deletes endpoints and never shows the secret again", async () => {
    const endpoint = await createEndpoint("https://hooks.example.com/molmesh");
    const listed = (await (await mesh.api("/v1/webhook_endpoints")).json()) as {
      data: Array<Record<string, unknown>>;
    };
    const mine = listed.data.find((e) => e.id === endpoint.id);
    expect(mine).toBeDefined();
    expect(mine).not.toHaveProperty("secret");
    const patched = await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`, {
      method: "PATCH",
      json: { description: "prod", events: ["conversation.turn.failed"] },
    });
    expect(await patched.json()).toMatchObject({ description: "prod", events: ["conversation.turn.failed"] });
    expect((await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await mesh.api(`/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(404);
  });
});
