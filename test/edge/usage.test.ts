import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { Usage } from "../../schema/wire/v2/index.ts";
import { TEST_ADMIN_TOKEN, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";
import { queryLocalD1 } from "../harness/query-local-d1.ts";
import { startWebhookReceiver, type ReceivedWebhook } from "../harness/start-webhook-receiver.ts";

type Envelope = { error: { message: string; type: string; code: string; param: string | null } };
type HopName = "route" | "answer" | "summary";
type Mol = {
  adapter: string;
  summary: { status: string };
  usage: Partial<Record<HopName, Usage>>;
};
type ResponseObject = {
  id: string;
  created_at: number;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number };
  metadata: Record<string, string>;
  mol: Mol;
};
type Bucket = {
  object: "usage.bucket";
  user?: string | null;
  key_id?: string;
  day?: string;
  adapter?: string;
  requests: number;
  hops: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  total_tokens: number;
};
type UsageList = { object: "list"; group_by: string; data: Bucket[] };
type Figures = Omit<Bucket, "object" | "user" | "key_id" | "day" | "adapter">;

const GROUPS = ["user", "key", "day", "adapter"] as const;
const GROUP_FIELD = { user: "user", key: "key_id", day: "day", adapter: "adapter" } as const;
const ROUTER_ADAPTER = DEFAULT_HARNESS.router.adapter;

let mesh: TestMesh;

beforeAll(async () => {
  mesh = await startTestMesh({
    adminToken: TEST_ADMIN_TOKEN,
    edgeVars: { MOL_WEBHOOK_ALLOW_LOOPBACK: "true" },
  });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

async function call(
  path: string,
  token: string,
  init: { method?: string; json?: unknown; accept?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (init.json !== undefined) headers["content-type"] = "application/json";
  if (init.accept !== undefined) headers.accept = init.accept;
  return fetch(`${mesh.edge.url}${path}`, {
    method: init.method ?? "GET",
    headers,
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
}

async function read<T>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function createTenantWithKeys(name: string, scopes: string[][]) {
  const tenant = await read<{ id: string }>(
    await call("/v1/admin/tenants", TEST_ADMIN_TOKEN, { method: "POST", json: { name } }),
  );
  const keys: Array<{ id: string; key: string }> = [];
  for (const keyScopes of scopes)
    keys.push(
      await read<{ id: string; key: string }>(
        await call(`/v1/admin/tenants/${tenant.id}/keys`, TEST_ADMIN_TOKEN, {
          method: "POST",
          json: { scopes: keyScopes },
        }),
      ),
    );
  return { tenantId: tenant.id, keys };
}

/** One hop as the API reported it, with whose turn it was. */
interface ReportedHop {
  keyId: string;
  user: string | null;
  day: string;
  adapter: string;
  answering: boolean;
  usage: Usage;
}

/** Waits until the stored turn's summary is settled, so its `mol.usage` holds every hop the turn will have. */
async function readSettled(token: string, responseId: string): Promise<ResponseObject> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await read<ResponseObject>(await call(`/v1/responses/${responseId}`, token));
    if (response.mol.summary.status !== "pending") return response;
    if (Date.now() > deadline) throw new Error(`summary of ${responseId} still pending`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function hopsOf(mol: Mol, keyId: string, user: string | null, createdAt: number): ReportedHop[] {
  const day = new Date(createdAt * 1000).toISOString().slice(0, 10);
  const answerHop = mol.usage.answer ? "answer" : "route";
  return (["route", "answer", "summary"] as const).flatMap((hop) => {
    const usage = mol.usage[hop];
    if (!usage) return [];
    const adapter = hop === "route" ? ROUTER_ADAPTER : mol.adapter;
    return [{ keyId, user, day, adapter, answering: hop === answerHop, usage }];
  });
}

/** What the usage API must answer for `groupBy`, summed from the hops' own figures. */
function expectedBuckets(hops: readonly ReportedHop[], groupBy: (typeof GROUPS)[number]): Bucket[] {
  const groups = new Map<string, Bucket>();
  for (const hop of hops) {
    const value = { user: hop.user, key: hop.keyId, day: hop.day, adapter: hop.adapter }[groupBy];
    const id = value ?? "";
    const bucket = groups.get(id) ?? {
      object: "usage.bucket" as const,
      [GROUP_FIELD[groupBy]]: value,
      ...{ requests: 0, hops: 0, input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    };
    bucket.requests += hop.answering ? 1 : 0;
    bucket.hops += 1;
    bucket.input_tokens += hop.usage.promptTokens;
    bucket.cached_input_tokens += hop.usage.cachedPromptTokens;
    bucket.output_tokens += hop.usage.completionTokens;
    bucket.total_tokens += hop.usage.promptTokens + hop.usage.completionTokens;
    groups.set(id, bucket);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, bucket]) => bucket);
}

const sum = (buckets: readonly Figures[]) => buckets.reduce((total, b) => total + b.hops, 0);

describe("usage by tenant, key and end user", () => {
  const reported: ReportedHop[] = [];
  let tenantA: Awaited<ReturnType<typeof createTenantWithKeys>>;
  let tenantB: Awaited<ReturnType<typeof createTenantWithKeys>>;
  /** The stored turns' responses, as the client saw them (after their summaries settled). */
  const responses: ResponseObject[] = [];
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a failed test may leave it unset
    await receiver?.close();
  });

  it("records every hop of several turns by two users on two keys, as the API reported them", async () => {
    tenantA = await createTenantWithKeys("Usage A", [
      ["conversations", "responses", "chat", "admin", "webhooks"],
      ["conversations", "responses", "chat"],
    ]);
    tenantB = await createTenantWithKeys("Usage B", [["conversations", "responses", "chat", "admin"]]);
    const [one, two] = tenantA.keys;
    if (!one || !two) throw new Error("tenant A has two keys");
    receiver = await startWebhookReceiver();
    const endpoint = await call("/v1/webhook_endpoints", one.key, {
      method: "POST",
      json: { url: receiver.url, events: ["conversation.turn.completed", "conversation.summary.created"] },
    });
    expect(endpoint.status, await endpoint.clone().text()).toBe(200);

    // Stored turns (route, answer, summary): alice twice in one conversation (the second reuses the KV cache).
    const conversation = (
      await read<{ id: string }>(await call("/v1/conversations", one.key, { method: "POST", json: {} }))
    ).id;
    const stored: Array<{
      token: string;
      keyId: string;
      user: string | null;
      body: Record<string, unknown>;
    }> = [
      { token: one.key, keyId: one.id, user: "alice", body: { conversation, user: "alice" } },
      { token: one.key, keyId: one.id, user: "alice", body: { conversation, user: "alice" } },
      { token: one.key, keyId: one.id, user: "bob", body: { safety_identifier: "bob", user: "ignored" } },
      { token: two.key, keyId: two.id, user: "alice", body: { user: "alice", metadata: { order: "42" } } },
      { token: two.key, keyId: two.id, user: null, body: {} },
    ];
    for (const [index, turn] of stored.entries()) {
      const response = await read<ResponseObject>(
        await call("/v1/responses", turn.token, {
          method: "POST",
          json: { input: `tell me about the number ${index}`, max_output_tokens: 8, ...turn.body },
        }),
      );
      const settled = await readSettled(turn.token, response.id);
      // The critical path the response reported is the route and answer hops of `mol.usage`, cached included.
      const { route, answer } = settled.mol.usage;
      const critical = [route, answer].filter((hop) => hop !== undefined);
      expect(response.usage.input_tokens).toBe(critical.reduce((n, hop) => n + hop.promptTokens, 0));
      expect(response.usage.input_tokens_details.cached_tokens).toBe(
        critical.reduce((n, hop) => n + hop.cachedPromptTokens, 0),
      );
      expect(response.usage.output_tokens).toBe(critical.reduce((n, hop) => n + hop.completionTokens, 0));
      responses.push(settled);
      reported.push(...hopsOf(settled.mol, turn.keyId, turn.user, settled.created_at));
    }
    // The second turn of the conversation found its prefix in the KV cache: cached tokens are in the figures.
    const second = responses[1]?.mol.usage;
    expect(
      (second?.route?.cachedPromptTokens ?? 0) + (second?.answer?.cachedPromptTokens ?? 0),
    ).toBeGreaterThan(0);

    // A chat completion (stateless: route and answer only) for bob on the second key.
    const chat = await read<{ created: number; mol: Mol }>(
      await call("/v1/chat/completions", two.key, {
        method: "POST",
        json: { model: "mol", user: "bob", max_tokens: 8, messages: [{ role: "user", content: "hi there" }] },
      }),
    );
    reported.push(...hopsOf(chat.mol, two.id, "bob", chat.created));
    // Tenant B's own turn: its usage must never show in A's.
    const [b] = tenantB.keys;
    if (!b) throw new Error("tenant B has a key");
    await read(
      await call("/v1/responses", b.key, {
        method: "POST",
        json: { input: "hi", user: "alice", max_output_tokens: 8 },
      }),
    );

    // Usage is written after each turn's summary: wait for all of it.
    const expectedHops = reported.length;
    const deadline = Date.now() + 30_000;
    let byKey: UsageList;
    for (;;) {
      byKey = await read<UsageList>(await call("/v1/usage?group_by=key", one.key));
      if (sum(byKey.data) >= expectedHops || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    for (const groupBy of GROUPS) {
      const tenantView = await read<UsageList>(await call(`/v1/usage?group_by=${groupBy}`, one.key));
      expect(tenantView.group_by).toBe(groupBy);
      expect(tenantView.data, groupBy).toEqual(expectedBuckets(reported, groupBy));
      const adminView = await read<UsageList>(
        await call(`/v1/admin/tenants/${tenantA.tenantId}/usage?group_by=${groupBy}`, TEST_ADMIN_TOKEN),
      );
      expect(adminView.data).toEqual(tenantView.data);
    }
    const byUser = await read<UsageList>(await call("/v1/usage?group_by=user", one.key));
    expect(byUser.data.map((row) => [row.user, row.requests])).toEqual([
      [null, 1],
      ["alice", 3],
      ["bob", 2],
    ]);
    console.log(
      ["user", "requests", "hops", "input", "cached", "output", "total"].join("\t") +
        "\n" +
        byUser.data
          .map((r) =>
            [
              r.user ?? "(none)",
              r.requests,
              r.hops,
              r.input_tokens,
              r.cached_input_tokens,
              r.output_tokens,
              r.total_tokens,
            ].join("\t"),
          )
          .join("\n"),
    );

    // The day range: today's turns are in [today, today] and none are in a range that ends yesterday.
    const today = new Date().toISOString().slice(0, 10);
    const day = reported[0]?.day ?? today;
    const inRange = await read<UsageList>(await call(`/v1/usage?from=${day}&to=${day}`, one.key));
    expect(inRange.data).toEqual(expectedBuckets(reported, "day"));
    const before = await read<UsageList>(await call("/v1/usage?from=2020-01-01&to=2020-12-31", one.key));
    expect(before.data).toEqual([]);
  });

  it("counts a hop once however often its write is repeated", async () => {
    const before = await read<UsageList>(
      await call("/v1/usage?group_by=adapter", tenantA.keys[0]?.key ?? ""),
    );
    // What a retried write does: the same ledger rows again. The ledger keeps one, the rollup counts one.
    await queryLocalD1(
      mesh.persistDir,
      `INSERT INTO usage_hops SELECT * FROM usage_hops WHERE tenant_id = '${tenantA.tenantId}' ON CONFLICT DO NOTHING`,
    );
    const update = await queryLocalD1(
      mesh.persistDir,
      `UPDATE usage_hops SET input_tokens = 0 WHERE tenant_id = '${tenantA.tenantId}'`,
    ).then(
      () => "updated",
      (error: unknown) => {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        return `${stdout ?? ""}${stderr ?? ""}`;
      },
    );
    expect(update).toMatch(/append-only/);
    const after = await read<UsageList>(await call("/v1/usage?group_by=adapter", tenantA.keys[0]?.key ?? ""));
    expect(after.data).toEqual(before.data);
    expect(sum(after.data)).toBe(reported.length);
  });

  it("answers CSV for format=csv or Accept: text/csv, with the same figures", async () => {
    const token = tenantA.keys[0]?.key ?? "";
    for (const groupBy of GROUPS) {
      const json = await read<UsageList>(await call(`/v1/usage?group_by=${groupBy}`, token));
      const viaFormat = await call(`/v1/usage?group_by=${groupBy}&format=csv`, token);
      const viaAccept = await call(`/v1/usage?group_by=${groupBy}`, token, { accept: "text/csv" });
      expect(viaFormat.status).toBe(200);
      expect(viaFormat.headers.get("content-type")).toMatch(/^text\/csv/);
      const csv = await viaFormat.text();
      expect(await viaAccept.text()).toBe(csv);
      const [header, ...lines] = csv.split("\r\n");
      expect(header).toBe(
        `${GROUP_FIELD[groupBy]},requests,input_tokens,cached_input_tokens,output_tokens,total_tokens`,
      );
      expect(lines.pop()).toBe("");
      expect(lines).toEqual(
        json.data.map((row) =>
          [
            row[GROUP_FIELD[groupBy]] ?? "",
            row.requests,
            row.input_tokens,
            row.cached_input_tokens,
            row.output_tokens,
            row.total_tokens,
          ].join(","),
        ),
      );
    }
    const admin = await call(`/v1/admin/tenants/${tenantA.tenantId}/usage?group_by=user`, TEST_ADMIN_TOKEN, {
      accept: "text/csv",
    });
    expect(admin.headers.get("content-type")).toMatch(/^text\/csv/);
    expect((await admin.text()).split("\r\n")[0]).toMatch(/^user,requests,/);
  });

  it("keeps each tenant to its own usage", async () => {
    const [b] = tenantB.keys;
    const [one, two] = tenantA.keys;
    if (!b || !one || !two) throw new Error("keys");
    const own = await read<UsageList>(await call("/v1/usage?group_by=key", b.key));
    expect(own.data.map((row) => row.key_id)).toEqual([b.id]);
    const byAdmin = await read<UsageList>(
      await call(`/v1/admin/tenants/${tenantB.tenantId}/usage?group_by=key`, TEST_ADMIN_TOKEN),
    );
    expect(byAdmin.data).toEqual(own.data);
    const ofA = await read<UsageList>(await call("/v1/usage?group_by=key", one.key));
    expect(ofA.data.map((row) => row.key_id).sort()).toEqual([one.id, two.id].sort());
    // B's key cannot reach A's usage: not through the admin route, and /v1/usage has no tenant to name.
    const admin = await read<Envelope>(await call(`/v1/admin/tenants/${tenantA.tenantId}/usage`, b.key), 403);
    expect(admin.error.code).toBe("admin_token_required");
    const named = await read<Envelope>(await call(`/v1/usage?tenant=${tenantA.tenantId}`, b.key), 400);
    expect(named.error.param).toBe("tenant");
    // A key without the admin scope sees no usage at all.
    await read<Envelope>(await call("/v1/usage", two.key), 403);
  });

  it("refuses bad parameters with a 400 envelope", async () => {
    const token = tenantA.keys[0]?.key ?? "";
    const cases: Array<[string, string]> = [
      ["group_by=model", "group_by"],
      ["from=2026-02-30", "from"],
      ["to=yesterday", "to"],
      ["from=2026-12-02&to=2026-12-01", "from"],
      ["format=xml", "format"],
    ];
    for (const [query, param] of cases) {
      const error = await read<Envelope>(await call(`/v1/usage?${query}`, token), 400);
      expect(error.error, query).toMatchObject({ type: "invalid_request_error", param });
      const admin = await read<Envelope>(
        await call(`/v1/admin/tenants/${tenantA.tenantId}/usage?${query}`, TEST_ADMIN_TOKEN),
        400,
      );
      expect(admin.error.param).toBe(param);
    }
    const missing = await read<Envelope>(
      await call("/v1/admin/tenants/ten_missing/usage", TEST_ADMIN_TOKEN),
      404,
    );
    expect(missing.error.code).toBe("tenant_not_found");
  });

  it("carries the response id the client saw and its metadata in the webhook events", async () => {
    const summaries = responses.filter((response) => response.mol.summary.status === "ready").length;
    const typed = (type: string) => (all: readonly ReceivedWebhook[]) =>
      all.filter((hook) => (JSON.parse(hook.body) as { type: string }).type === type);
    await receiver.waitFor(
      (all) =>
        typed("conversation.turn.completed")(all).length >= responses.length &&
        typed("conversation.summary.created")(all).length >= summaries,
    );
    const events = receiver.received.map(
      (hook) =>
        JSON.parse(hook.body) as {
          type: string;
          data: { response_id: string; metadata: Record<string, string> };
        },
    );
    expect(events).toHaveLength(responses.length + summaries);
    const ids = responses.map((response) => response.id);
    for (const event of events) expect(ids).toContain(event.data.response_id);
    // Each event carries its own response's metadata: only the one sent with `metadata` has any.
    for (const event of events) {
      const response = responses.find((candidate) => candidate.id === event.data.response_id);
      expect(event.data.metadata).toEqual(response?.metadata);
    }
    const tagged = events.filter((event) => event.data.metadata.order === "42");
    expect(tagged.map((event) => event.data.response_id)).toContain(responses[3]?.id);
    expect(tagged.map((event) => event.type)).toContain("conversation.turn.completed");
  });
});
