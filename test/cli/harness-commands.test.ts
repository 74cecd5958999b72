import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import {
  formatHarnessDiff,
  formatHarnessGuard,
  formatHarnessLabel,
  formatHarnessLabelMove,
  formatHarnessVersion,
} from "../../workers/src/api/format/format-harness.ts";
import { formatItemList } from "../../workers/src/api/format/format-item-list.ts";
import type {
  HarnessLabel,
  HarnessLabelMove,
  HarnessLabelTarget,
} from "../../workers/src/harness-registry/harness-registry-store.ts";
import { emptyCategoryCounts } from "../../workers/src/harness-registry/turn-failures.ts";
import { errorResponse, jsonResponse } from "./mesh-fixtures.ts";
import type { MeshHandler } from "./recording-fetch.ts";
import { runCliInMemory } from "./run-cli-in-memory.ts";

/**
 * `molmesh harness`: the requests each action sends and what it prints, against bodies made by the edge's own
 * formatters (a small in-memory label registry for label, history and rollback).
 */

const H1 = `sha256:${"1".repeat(64)}`;
const H2 = `sha256:${"2".repeat(64)}`;
const H3 = `sha256:${"3".repeat(64)}`;
const AT = 1_765_000_000;

const version = (hash: string, document?: unknown) =>
  formatHarnessVersion({
    hash,
    scope: "tenant",
    parent: hash === H1 ? null : H1,
    message: hash === H1 ? null : "shorter router prompt",
    bytes: 1234,
    createdBy: "key_1",
    createdAt: AT,
    ...(document === undefined ? {} : { document: JSON.stringify(document) }),
  });

/** `PUT` and `GET …/history` of one tenant's labels, as the registry answers them. */
function createLabelRegistry() {
  const labels = new Map<string, HarnessLabel>();
  const moves: HarnessLabelMove[] = [];
  const handle: MeshHandler = (request) => {
    const match = /^\/v1\/harness-labels\/([^/?]+)(\/history)?(?:\?(.*))?$/.exec(request.path);
    if (!match) throw new Error(`unexpected request ${request.method} ${request.path}`);
    const name = match[1] ?? "";
    const current = labels.get(name);
    if (request.method === "PUT") {
      const body = request.body as HarnessLabelTarget & { reason?: string };
      const to: HarnessLabelTarget = { harness: body.harness, canary: body.canary ?? null };
      const revision = (current?.revision ?? 0) + 1;
      const label: HarnessLabel = {
        tenantId: "t",
        name,
        guard: null,
        ...to,
        revision,
        updatedBy: "key_1",
        updatedAt: AT + revision,
      };
      labels.set(name, label);
      moves.unshift({
        seq: moves.length + 1,
        tenantId: "t",
        name,
        revision,
        from: current ? { harness: current.harness, canary: current.canary } : null,
        to,
        reason: body.reason ?? null,
        actor: "key_1",
        createdAt: AT + revision,
      });
      return jsonResponse(formatHarnessLabel(label));
    }
    if (!current)
      return errorResponse({
        status: 404,
        type: "invalid_request_error",
        code: "harness_label_not_found",
        message: `No harness_label ${name}`,
      });
    const limit = Number(new URLSearchParams(match[3] ?? "").get("limit") ?? 20);
    const page = moves.filter((move) => move.name === name);
    return jsonResponse(
      formatItemList(page.slice(0, limit).map(formatHarnessLabelMove), { hasMore: page.length > limit }),
    );
  };
  return { handle, labels };
}

let file: string;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "molmesh-harness-cli-"));
  file = join(dir, "harness.json");
  await writeFile(file, JSON.stringify(DEFAULT_HARNESS));
  await writeFile(join(dir, "broken.json"), "{");
});

describe("molmesh harness", { timeout: 10_000 }, () => {
  it("push posts the file's document with parent and message, and prints the hash alone", async () => {
    const run = await runCliInMemory({
      argv: ["harness", "push", file, "--parent", H1, "-m", "shorter router prompt"],
      handle: () => jsonResponse(version(H2)),
    });

    expect(run.code).toBe(0);
    expect(run.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/harnesses",
      body: { document: DEFAULT_HARNESS, parent: H1, message: "shorter router prompt" },
    });
    expect(run.stdout).toBe(`${H2}\n`);
  });

  it("push of a file that is missing or not JSON is a usage error, with no request", async () => {
    const missing = await runCliInMemory({
      argv: ["harness", "push", join(tmpdir(), "no-such-harness.json")],
    });
    const broken = await runCliInMemory({ argv: ["harness", "push", join(file, "..", "broken.json")] });

    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^molmesh: cannot read .*no-such-harness\.json: no such file\n/);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("broken.json is not JSON");
    expect([...missing.requests, ...broken.requests]).toEqual([]);
  });

  it("a refused document is the API's message on stderr and exit 1", async () => {
    const run = await runCliInMemory({
      argv: ["harness", "push", file],
      handle: () =>
        errorResponse({
          status: 400,
          type: "invalid_request_error",
          code: "invalid_value",
          param: "document.router.maxTokens",
          message: "Too small: expected number to be >=1",
        }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^molmesh: Too small: expected number to be >=1 \(invalid_value, HTTP 400/);
  });

  it("show prints the facts and the document; --json the version as it came", async () => {
    const body = version(H2, DEFAULT_HARNESS);
    const run = await runCliInMemory({ argv: ["harness", "show", H2], handle: () => jsonResponse(body) });
    const json = await runCliInMemory({
      argv: ["harness", "show", H2, "--json"],
      handle: () => jsonResponse(body),
    });

    expect(run.requests[0]).toMatchObject({ method: "GET", path: `/v1/harnesses/${H2}` });
    expect(run.stdout).toContain(`hash     ${H2}\nscope    tenant\nparent   ${H1}\n`);
    expect(run.stdout).toContain("created  2025-12-06T05:46:40Z by key_1\n");
    expect(run.stdout).toContain(JSON.stringify(DEFAULT_HARNESS, null, 2));
    expect(JSON.parse(json.stdout)).toEqual(body);
  });

  it("diff prints one patch operation per line", async () => {
    const run = await runCliInMemory({
      argv: ["harness", "diff", H1, H2],
      handle: () =>
        jsonResponse(
          formatHarnessDiff(H1, H2, [
            { op: "replace", path: "/router/maxTokens", value: 64 },
            { op: "remove", path: "/summaryWait" },
          ]),
        ),
    });
    expect(run.requests[0]?.path).toBe(`/v1/harnesses/${H1}/diff/${H2}`);
    expect(run.stdout).toBe("replace /router/maxTokens 64\nremove /summaryWait\n");
  });

  it("guard prints the settings, each arm's failures by category and the statistic", async () => {
    const label: HarnessLabel = {
      tenantId: "t",
      name: "production",
      harness: H1,
      canary: { harness: H2, percent: 10 },
      guard: null,
      revision: 2,
      updatedBy: "key_1",
      updatedAt: AT,
    };
    const counts = {
      production: { turns: 3, failures: 0, categories: emptyCategoryCounts() },
      canary: {
        turns: 5,
        failures: 5,
        categories: { ...emptyCategoryCounts(), turn_failed: 4, feedback_negative: 2 },
      },
    };
    const run = await runCliInMemory({
      argv: ["harness", "guard", "production"],
      handle: () => jsonResponse(formatHarnessGuard(label, counts)),
    });
    expect(run.requests[0]?.path).toBe("/v1/harness-labels/production/guard");
    expect(run.stdout.split("\n")).toEqual([
      `production → 111111111111 + canary 222222222222 10%`,
      "settings   enabled true, alpha 0.01, beta 0.05, delta 0.2, floor 0.05, minTurns 5",
      "production 0/3 failed",
      "canary     5/5 failed, turn_failed 4, feedback_negative 2",
      "sprt       llr 8.047 / boundary 4.554, p0 0.050, p1 0.250, roll back",
      "",
    ]);
    const none = await runCliInMemory({
      argv: ["harness", "guard", "production"],
      handle: () => jsonResponse(formatHarnessGuard({ ...label, canary: null }, null)),
    });
    expect(none.stdout).toMatch(/no canary: nothing to watch\n$/);
  });

  it("label puts the harness and canary; history lists the moves; rollback puts the previous target back", async () => {
    const registry = createLabelRegistry();
    const cli = (...argv: string[]) =>
      runCliInMemory({ argv: ["harness", ...argv], handle: registry.handle });

    const first = await cli("label", "production", H1);
    const canary = await cli(
      "label",
      "production",
      H1,
      "--canary",
      H2,
      "--percent",
      "50",
      "--reason",
      "try v2",
    );
    const moved = await cli("label", "production", H3);
    const rollback = await cli("rollback", "production", "--reason", "errors up");
    const history = await cli("history", "production", "--limit", "4");

    expect(first.requests[0]).toMatchObject({
      method: "PUT",
      path: "/v1/harness-labels/production",
      body: { harness: H1, canary: null },
    });
    expect(canary.requests[0]?.body).toEqual({
      harness: H1,
      canary: { harness: H2, percent: 50 },
      reason: "try v2",
    });
    expect(canary.stdout).toBe(`production → ${H1}  canary ${H2} 50%  revision 2\n`);
    expect(moved.code).toBe(0);
    expect(rollback.code).toBe(0);
    expect(rollback.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /v1/harness-labels/production/history?limit=1",
      "PUT /v1/harness-labels/production",
    ]);
    expect(rollback.requests[1]?.body).toEqual({
      harness: H1,
      canary: { harness: H2, percent: 50 },
      reason: "rollback: errors up",
    });
    expect(rollback.stdout).toBe(
      `production → ${H1}  canary ${H2} 50%  revision 4  (rolled back from 333333333333)\n`,
    );
    expect(registry.labels.get("production")).toMatchObject({
      harness: H1,
      canary: { harness: H2, percent: 50 },
    });
    expect(history.requests[0]?.path).toBe("/v1/harness-labels/production/history?limit=4");
    expect(history.stdout.split("\n")).toEqual([
      "hlm_4  r4  2025-12-06T05:46:44Z  key_1  333333333333 → 111111111111 + canary 222222222222 50%  rollback: errors up",
      "hlm_3  r3  2025-12-06T05:46:43Z  key_1  111111111111 + canary 222222222222 50% → 333333333333",
      "hlm_2  r2  2025-12-06T05:46:42Z  key_1  111111111111 → 111111111111 + canary 222222222222 50%  try v2",
      "hlm_1  r1  2025-12-06T05:46:41Z  key_1  (none) → 111111111111",
      "",
    ]);
  });

  it("rollback of a label moved once has nowhere to go: exit 1, no PUT; of no label, the API's 404", async () => {
    const registry = createLabelRegistry();
    await runCliInMemory({ argv: ["harness", "label", "production", H1], handle: registry.handle });
    const once = await runCliInMemory({
      argv: ["harness", "rollback", "production"],
      handle: registry.handle,
    });
    const none = await runCliInMemory({ argv: ["harness", "rollback", "staging"], handle: registry.handle });

    expect(once.code).toBe(1);
    expect(once.stderr).toBe(
      "molmesh: label production has no previous harness to roll back to (it has moved once)\n",
    );
    expect(once.requests.map((r) => r.method)).toEqual(["GET"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^molmesh: No harness_label staging \(harness_label_not_found, HTTP 404/);
  });

  it.each([
    [["harness"], "harness takes push, show, diff, label, history, rollback or guard, got ''"],
    [["harness", "show"], "harness show takes <hash>, got ''"],
    [
      ["harness", "show", "abc"],
      "the hash must be a harness hash (sha256: and 64 lower-case hex digits), got 'abc'",
    ],
    [["harness", "diff", H1], "harness diff takes <hash> <hash>, got"],
    [["harness", "label", "production", H1, "--canary", H2], "--canary and --percent go together"],
    [
      ["harness", "label", "production", H1, "--canary", H2, "--percent", "101"],
      "--percent must be a whole number from 0 to 100",
    ],
    [["harness", "label", "Prod!", H1], "a label name is 1-64 of [a-z0-9._-]"],
    [["harness", "show", H1, "--parent", H2], "harness show does not take --parent"],
    [["harness", "push", "f.json", "--parent", "sha256:x"], "--parent must be a harness hash"],
  ])("%j is a usage error: exit 2, no request", async (argv, stderr) => {
    const run = await runCliInMemory({ argv });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(stderr);
    expect(run.stderr).toContain("(see molmesh harness --help)");
    expect(run.requests).toEqual([]);
  });
});
