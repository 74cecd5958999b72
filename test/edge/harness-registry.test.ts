import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashHarness } from "../../schema/harness/content-hash.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { MAX_HARNESS_DOCUMENT_BYTES } from "../../schema/harness/harness-registry.ts";
import type { HarnessVersionObject } from "../../workers/src/api/format/format-harness.ts";
import { createTenantKey } from "../harness/create-tenant-key.ts";
import { queryLocalD1 } from "../harness/query-local-d1.ts";
import { readJson } from "../harness/read-json.ts";
import { TEST_ADMIN_TOKEN, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * The harness registry in workerd with local D1 (no GPU node: nothing here runs a turn). The dev key is tenant
 * A (all scopes); tenant B is made with the admin API, with a key that may write.
 */

type Envelope = { error: { message: string; type: string; code: string; param: string | null } };
type Version = Omit<HarnessVersionObject, "document"> & { document?: HarnessDocument };
type Target = { harness: string; canary: { harness: string; percent: number } | null };
type Label = Target & {
  id: string;
  object: "harness.label";
  name: string;
  revision: number;
  updated_by: string;
};
type Move = {
  id: string;
  object: "harness.label.move";
  label: string;
  revision: number;
  from: Target | null;
  to: Target;
  reason: string | null;
  actor: string;
  created_at: number;
};
type List<T> = {
  object: "list";
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
};

let mesh: TestMesh;
let keyB: string;

const push = (json: unknown, token?: string) =>
  mesh.api("/v1/harnesses", { method: "POST", json, ...(token === undefined ? {} : { token }) });
const putLabel = (name: string, json: unknown, token?: string) =>
  mesh.api(`/v1/harness-labels/${name}`, { method: "PUT", json, ...(token === undefined ? {} : { token }) });

const V1: HarnessDocument = DEFAULT_HARNESS;
const V2: HarnessDocument = {
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, minConfidence: 0.4 },
  compaction: { ...DEFAULT_HARNESS.compaction, keepFullFraction: 0.45 },
};
let v1: Version;
let v2: Version;

beforeAll(async () => {
  mesh = await startTestMesh({ withNode: false, adminToken: TEST_ADMIN_TOKEN });
  keyB = await createTenantKey(mesh, "tenant b", ["admin", "responses"]);
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("harness versions", () => {
  it("stores two versions by the sha256: of their canonical JSON, the second with its parent", async () => {
    v1 = await readJson<Version>(await push({ document: V1, message: "the defaults" }));
    expect(v1).toMatchObject({
      object: "harness",
      id: await hashHarness(V1),
      hash: await hashHarness(V1),
      scope: "tenant",
      parent: null,
      message: "the defaults",
    });
    expect(v1.document).toEqual(V1);
    v2 = await readJson<Version>(await push({ document: V2, parent: v1.hash, message: "route confidence" }));
    expect(v2).toMatchObject({ hash: await hashHarness(V2), parent: v1.hash, message: "route confidence" });
    expect(v2.hash).not.toBe(v1.hash);
    const got = await readJson<Version>(await mesh.api(`/v1/harnesses/${v2.hash}`));
    expect(got).toEqual(v2);
  });

  it("is idempotent: the same content, keys in any order, is the same version, kept as first pushed", async () => {
    const reordered = Object.fromEntries(Object.entries(V1).reverse());
    const again = await readJson<Version>(await push({ document: reordered, message: "another message" }));
    expect(again).toEqual(v1);
  });

  it("lists the versions the tenant sees, paged, each once", async () => {
    const first = await readJson<List<Version>>(await mesh.api("/v1/harnesses?limit=1"));
    expect(first.data.map((v) => v.hash)).toEqual([v2.hash]);
    expect(first.has_more).toBe(true);
    expect(first.data[0]).not.toHaveProperty("document");
    const second = await readJson<List<Version>>(
      await mesh.api(`/v1/harnesses?limit=1&after=${first.last_id}`),
    );
    expect(second.data.map((v) => v.hash)).toEqual([v1.hash]);
    expect(second.has_more).toBe(false);
    const ascending = await readJson<List<Version>>(await mesh.api("/v1/harnesses?order=asc"));
    expect(ascending.data.map((v) => v.hash)).toEqual([v1.hash, v2.hash]);
  });

  it("diffs two versions as an RFC 6902 JSON Patch", async () => {
    const diff = await readJson<{ object: string; from: string; to: string; patch: Array<{ path: string }> }>(
      await mesh.api(`/v1/harnesses/${v1.hash}/diff/${v2.hash}`),
    );
    // The library orders operations its own way; what they are is the contract.
    const byPath = (patch: Array<{ path: string }>) =>
      [...patch].sort((a, b) => a.path.localeCompare(b.path));
    expect({ ...diff, patch: byPath(diff.patch) }).toEqual({
      object: "harness.diff",
      from: v1.hash,
      to: v2.hash,
      patch: [
        { op: "replace", path: "/compaction/keepFullFraction", value: 0.45 },
        { op: "add", path: "/router/minConfidence", value: 0.4 },
      ],
    });
    const back = await readJson<{ patch: Array<{ path: string }> }>(
      await mesh.api(`/v1/harnesses/${v2.hash}/diff/${v1.hash}`),
    );
    expect(byPath(back.patch)).toEqual([
      { op: "replace", path: "/compaction/keepFullFraction", value: 0.5 },
      { op: "remove", path: "/router/minConfidence" },
    ]);
  });
});

describe("harness labels", () => {
  it("labels production with a 50 % canary, moves it, and keeps who, when, from, to and why", async () => {
    const labelled = await readJson<Label>(
      await putLabel("production", {
        harness: v1.hash,
        canary: { harness: v2.hash, percent: 50 },
        reason: "try route confidence",
      }),
    );
    expect(labelled).toMatchObject({
      object: "harness.label",
      name: "production",
      harness: v1.hash,
      canary: { harness: v2.hash, percent: 50 },
      revision: 1,
    });
    expect(await readJson<Label>(await mesh.api("/v1/harness-labels/production"))).toEqual(labelled);

    const promoted = await readJson<Label>(
      await putLabel("production", { harness: v2.hash, reason: "promote" }),
    );
    expect(promoted).toMatchObject({ harness: v2.hash, canary: null, revision: 2 });

    const history = await readJson<List<Move>>(await mesh.api("/v1/harness-labels/production/history"));
    expect(history.data).toEqual([
      expect.objectContaining({
        label: "production",
        revision: 2,
        from: { harness: v1.hash, canary: { harness: v2.hash, percent: 50 } },
        to: { harness: v2.hash, canary: null },
        reason: "promote",
      }),
      expect.objectContaining({
        revision: 1,
        from: null,
        to: { harness: v1.hash, canary: { harness: v2.hash, percent: 50 } },
        reason: "try route confidence",
      }),
    ]);
    for (const move of history.data) {
      expect(move.actor).toMatch(/^key_/);
      expect(move.created_at).toBeGreaterThan(1_700_000_000);
    }
    const paged = await readJson<List<Move>>(
      await mesh.api(`/v1/harness-labels/production/history?limit=1&after=${history.data[0]?.id}`),
    );
    expect(paged.data.map((move) => move.revision)).toEqual([1]);

    const labels = await readJson<List<Label>>(await mesh.api("/v1/harness-labels"));
    expect(labels.data.map((label) => label.name)).toEqual(["production"]);

    const audit = await readJson<List<{ action: string; target: string; details: Record<string, unknown> }>>(
      await mesh.api("/v1/audit_log?limit=100"),
    );
    const moves = audit.data.filter((entry) => entry.action === "harness_label.moved");
    expect(moves.map((entry) => entry.details.harness)).toEqual([v2.hash, v1.hash]);
    expect(audit.data.filter((entry) => entry.action === "harness.created").map((e) => e.target)).toEqual([
      v2.hash,
      v1.hash,
    ]);

    // The database keeps the history append-only.
    const refused = await queryLocalD1(mesh.persistDir, "DELETE FROM harness_label_history").then(
      () => "deleted",
      (error: unknown) => `${String(error)}\n${(error as { stdout?: string }).stdout ?? ""}`,
    );
    expect(refused).toMatch(/append-only/);
  });
});

describe("bad input: a 4xx in the OpenAI envelope, nothing stored, nothing moved", () => {
  it("refuses an unknown key (naming it), an oversize document, an unknown hash, a bad label or percent", async () => {
    const before = await readJson<List<Version>>(await mesh.api("/v1/harnesses?limit=100"));
    const label = await readJson<Label>(await mesh.api("/v1/harness-labels/production"));

    const unknownKey = await readJson<Envelope>(
      await push({ document: { ...V1, templates: { ...V1.templates, bos: "<s>" } } }),
      400,
    );
    expect(unknownKey.error).toMatchObject({
      type: "invalid_request_error",
      code: "unknown_parameter",
      param: "document.templates.bos",
    });
    expect(unknownKey.error.message).toContain("bos");

    const oversize = {
      ...V1,
      router: { ...V1.router, systemPrompt: "x".repeat(MAX_HARNESS_DOCUMENT_BYTES) },
    };
    const tooLarge = await readJson<Envelope>(await push({ document: oversize }), 413);
    expect(tooLarge.error).toMatchObject({ code: "payload_too_large", param: "document" });

    const malformed = await readJson<Envelope>(
      await mesh.api("/v1/harnesses", {
        method: "POST",
        body: "{",
        headers: { "content-type": "application/json" },
      }),
      400,
    );
    expect(malformed.error.code).toBe("invalid_json");

    const unknown = `sha256:${"0".repeat(64)}`;
    expect((await readJson<Envelope>(await mesh.api(`/v1/harnesses/${unknown}`), 404)).error.code).toBe(
      "harness_not_found",
    );
    expect(
      (await readJson<Envelope>(await mesh.api(`/v1/harnesses/${v1.hash}/diff/${unknown}`), 404)).error.param,
    ).toBe("other");
    expect((await readJson<Envelope>(await push({ document: V2, parent: unknown }), 404)).error.param).toBe(
      "parent",
    );
    expect(
      (await readJson<Envelope>(await putLabel("production", { harness: unknown }), 404)).error.param,
    ).toBe("harness");
    const unknownCanary = { harness: v1.hash, canary: { harness: unknown, percent: 5 } };
    expect((await readJson<Envelope>(await putLabel("production", unknownCanary), 404)).error.param).toBe(
      "canary.harness",
    );
    const over = { harness: v1.hash, canary: { harness: v2.hash, percent: 101 } };
    expect((await readJson<Envelope>(await putLabel("production", over), 400)).error.param).toBe(
      "canary.percent",
    );
    expect(
      (await readJson<Envelope>(await putLabel("Production!", { harness: v1.hash }), 400)).error.param,
    ).toBe("name");
    expect((await readJson<Envelope>(await mesh.api("/v1/harnesses/not-a-hash"), 400)).error.param).toBe(
      "hash",
    );

    expect(await readJson<List<Version>>(await mesh.api("/v1/harnesses?limit=100"))).toEqual(before);
    expect(await readJson<Label>(await mesh.api("/v1/harness-labels/production"))).toEqual(label);
    const history = await readJson<List<Move>>(await mesh.api("/v1/harness-labels/production/history"));
    expect(history.data).toHaveLength(2);
  });
});

describe("tenants", () => {
  it("another tenant's key sees none of it (404), and cannot label with it", async () => {
    for (const path of [
      `/v1/harnesses/${v1.hash}`,
      `/v1/harnesses/${v1.hash}/diff/${v2.hash}`,
      "/v1/harness-labels/production",
      "/v1/harness-labels/production/history",
    ])
      expect((await mesh.api(path, { token: keyB })).status, path).toBe(404);
    const list = await readJson<List<Version>>(await mesh.api("/v1/harnesses", { token: keyB }));
    expect(list.data).toEqual([]);
    expect((await readJson<List<Label>>(await mesh.api("/v1/harness-labels", { token: keyB }))).data).toEqual(
      [],
    );
    const pinned = await readJson<Envelope>(await putLabel("production", { harness: v1.hash }, keyB), 404);
    expect(pinned.error).toMatchObject({ code: "harness_not_found", param: "harness" });
    expect((await mesh.api("/v1/harness-labels/production", { token: keyB })).status).toBe(404);
  });

  it("the same content pushed by another tenant is its own version", async () => {
    const own = await readJson<Version>(await push({ document: V1, message: "mine" }, keyB));
    expect(own).toMatchObject({ hash: v1.hash, scope: "tenant", message: "mine" });
    expect(own.created_by).not.toBe(v1.created_by);
  });

  it("global versions come from the admin token, and every tenant sees them", async () => {
    const global: HarnessDocument = { ...V1, router: { ...V1.router, minConfidence: 0.2 } };
    // Tenant A holds the same content as its own version: it sees its own, once.
    const own = await readJson<Version>(await push({ document: global }));
    const stored = await readJson<Version>(
      await mesh.api("/v1/admin/harnesses", {
        method: "POST",
        json: { document: global },
        token: TEST_ADMIN_TOKEN,
      }),
    );
    expect(stored).toMatchObject({ scope: "global", created_by: "admin" });
    const tenantKey = await readJson<Envelope>(
      await mesh.api("/v1/admin/harnesses", { method: "POST", json: { document: global } }),
      403,
    );
    expect(tenantKey.error.code).toBe("admin_token_required");
    const seenByB = await readJson<Version>(await mesh.api(`/v1/harnesses/${stored.hash}`, { token: keyB }));
    expect(seenByB.scope).toBe("global");
    const labelled = await readJson<Label>(await putLabel("staging", { harness: stored.hash }, keyB));
    expect(labelled.harness).toBe(stored.hash);
    expect(await readJson<Version>(await mesh.api(`/v1/harnesses/${stored.hash}`))).toEqual(own);
    const listA = await readJson<List<Version>>(await mesh.api("/v1/harnesses?limit=100"));
    expect(listA.data.filter((v) => v.hash === stored.hash).map((v) => v.scope)).toEqual(["tenant"]);
    const listB = await readJson<List<Version>>(await mesh.api("/v1/harnesses?limit=100", { token: keyB }));
    expect(listB.data.map((v) => [v.hash, v.scope])).toEqual([
      [stored.hash, "global"],
      [v1.hash, "tenant"],
    ]);
  });
});
