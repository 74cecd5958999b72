import { describe, expect, it } from "vitest";
import { formatWebhookEndpoint } from "../../workers/src/api/format/format-webhook-endpoint.ts";
import { formatItemList } from "../../workers/src/api/format/format-item-list.ts";
import type { WebhookEndpoint } from "../../workers/src/webhooks/webhook-endpoint-store.ts";
import { errorResponse, jsonResponse, USAGE_BY_DAY } from "./mesh-fixtures.ts";
import { runCliInMemory } from "./run-cli-in-memory.ts";

const ENDPOINT: WebhookEndpoint = {
  id: "we_1",
  tenantId: "t",
  url: "https://hooks.example/molmesh",
  description: "ops",
  events: ["conversation.turn.completed"],
  status: "enabled",
  disabledReason: null,
  secret: "whsec_abc",
  previousSecret: null,
  previousSecretExpiresAt: null,
  inbound: null,
  createdAt: 1_700_000_000,
  updatedAt: 1_700_000_000,
};

describe("molmesh usage", { timeout: 10_000 }, () => {
  it("asks for the group and period given, and prints one aligned row per group", async () => {
    const run = await runCliInMemory({
      argv: ["usage", "--group-by", "day", "--from", "2026-11-30", "--to", "2026-12-02"],
      handle: () => jsonResponse(USAGE_BY_DAY),
    });

    expect(run.code).toBe(0);
    expect(run.requests[0]).toMatchObject({
      method: "GET",
      path: "/v1/usage?group_by=day&from=2026-11-30&to=2026-12-02",
    });
    expect(run.stdout).toBe(
      [
        "day         requests  input_tokens  cached_input_tokens  output_tokens  total_tokens",
        "2026-11-30         3          1200                  900             80          1280",
        "2026-12-01         1            40                    0              8            48",
        "",
      ].join("\n"),
    );
  });

  it("--csv: a header row and one row per group", async () => {
    const run = await runCliInMemory({
      argv: ["usage", "--group-by", "day", "--csv"],
      handle: () => jsonResponse(USAGE_BY_DAY),
    });

    expect(run.stdout.split("\n")[0]).toBe(
      "day,requests,input_tokens,cached_input_tokens,output_tokens,total_tokens",
    );
    expect(run.stdout.split("\n")[1]).toBe("2026-11-30,3,1200,900,80,1280");
  });

  it.each([
    [
      ["usage", "--group-by", "week"],
      "molmesh: --group-by must be user, key, day, adapter, got 'week'\n(see molmesh usage --help)\n",
    ],
    [
      ["usage", "--from", "yesterday"],
      "molmesh: --from must be a date (2026-12-01), a date-time or unix seconds, got 'yesterday'\n(see molmesh usage --help)\n",
    ],
    [["usage", "--limit", "3"], "molmesh: usage does not take --limit\n(see molmesh usage --help)\n"],
  ])("%j is a usage error: exit 2, no request", async (argv, stderr) => {
    const run = await runCliInMemory({ argv });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(stderr);
    expect(run.requests).toEqual([]);
  });

  it("an answer without rows is a shape error naming the report (the wrong server, a proxy's page)", async () => {
    const run = await runCliInMemory({ argv: ["usage"], handle: () => jsonResponse({ ok: true }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("unexpected usage report from the server at data");
  });
});

describe("molmesh webhooks", { timeout: 10_000 }, () => {
  it("create posts the url, events and description, and shows the signing secret once", async () => {
    const run = await runCliInMemory({
      argv: [
        "webhooks",
        "create",
        ENDPOINT.url,
        "--event",
        "conversation.turn.completed",
        "--description",
        "ops",
      ],
      handle: () => jsonResponse(formatWebhookEndpoint(ENDPOINT, { secret: ENDPOINT.secret })),
    });

    expect(run.code).toBe(0);
    expect(run.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/webhook_endpoints",
      body: { url: ENDPOINT.url, events: ["conversation.turn.completed"], description: "ops" },
    });
    expect(run.stdout).toBe(
      "we_1  enabled  https://hooks.example/molmesh  conversation.turn.completed  ops\nsecret: whsec_abc\n",
    );
    expect(run.stderr).toContain("shown only now");
  });

  it("list prints one endpoint per line; delete sends DELETE to the endpoint and says so", async () => {
    const list = await runCliInMemory({
      argv: ["webhooks", "list", "--limit", "5"],
      handle: () => jsonResponse(formatItemList([formatWebhookEndpoint(ENDPOINT)], { hasMore: false })),
    });
    const deleted = await runCliInMemory({
      argv: ["webhooks", "delete", "we_1"],
      handle: () => jsonResponse({ id: "we_1", object: "webhook_endpoint.deleted", deleted: true }),
    });

    expect(list.requests[0]?.path).toBe("/v1/webhook_endpoints?limit=5");
    expect(list.stdout).toBe(
      "we_1  enabled  https://hooks.example/molmesh  conversation.turn.completed  ops\n",
    );
    expect(list.stdout).not.toContain("whsec");
    expect(deleted.requests[0]).toMatchObject({ method: "DELETE", path: "/v1/webhook_endpoints/we_1" });
    expect(deleted.stdout).toBe("deleted we_1\n");
  });

  it("an API error (an unknown endpoint) is one line on stderr and exit 1", async () => {
    const run = await runCliInMemory({
      argv: ["webhooks", "delete", "we_nope"],
      handle: () =>
        errorResponse({
          status: 404,
          type: "invalid_request_error",
          code: "not_found",
          message: "No webhook_endpoint we_nope",
        }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^molmesh: No webhook_endpoint we_nope \(not_found, HTTP 404/);
  });

  it.each([
    [
      ["webhooks"],
      "molmesh: webhooks takes list, create <url> or delete <id>, got ''\n(see molmesh webhooks --help)\n",
    ],
    [["webhooks", "create", "https://x.example"], "needs at least one --event"],
    [["webhooks", "create", "https://x.example", "--event", "turn.done"], "has no event 'turn.done'"],
    [
      ["webhooks", "delete"],
      "molmesh: webhooks delete takes one endpoint id, got ''\n(see molmesh webhooks --help)\n",
    ],
    [
      ["webhooks", "delete", "we_1", "--event", "conversation.turn.failed"],
      "webhooks delete does not take --event",
    ],
  ])("%j is a usage error: exit 2, no request", async (argv, stderr) => {
    const run = await runCliInMemory({ argv });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(stderr);
    expect(run.requests).toEqual([]);
  });
});
