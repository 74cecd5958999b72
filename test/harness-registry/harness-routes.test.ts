import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { MAX_HARNESS_DOCUMENT_BYTES } from "../../schema/harness/harness-registry.ts";
import { createApp } from "../../workers/src/app/create-app.ts";
import type { AppDeps } from "../../workers/src/app/app-deps.ts";
import type { TenantLimiter } from "../../workers/src/limits/tenant-limits.ts";
import { createMemoryAppDeps, unusedHarnessRegistry } from "../tenancy/create-memory-app-deps.ts";

const DEV_KEY = "sk-dev";
const ADMIN_TOKEN = "adm-token";
const unused = (): never => {
  throw new Error("not used by these tests");
};
const HASH = `sha256:${"a".repeat(64)}`;

type Envelope = { error: { message: string; type: string; code: string; param: string | null } };

/**
 * The real app, its registry store refusing every call: each request here must be answered before anything is
 * read, stored or moved. Writes pass an always-admitting limiter.
 */
function createTestApp(registry: Partial<AppDeps["harnessRegistry"]> = {}) {
  const limiter: TenantLimiter = {
    admit: unused,
    admitWrite: () => Promise.resolve({ ok: true, headers: {} } as never),
    refundWrite: () => Promise.resolve(),
    refund: unused,
    record: unused,
    readLimits: unused,
    setLimits: unused,
  };
  const { deps } = createMemoryAppDeps(DEV_KEY, {
    limits: () => limiter,
    adminToken: ADMIN_TOKEN,
    harnessRegistry: { ...unusedHarnessRegistry(), ...registry },
    telemetry: { debug: false, write: () => undefined },
  });
  const app = createApp(() => deps);
  const send = (
    method: string,
    path: string,
    body?: unknown,
    token = DEV_KEY,
    headers: Record<string, string> = {},
  ) =>
    app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  return { send };
}

async function expectError(response: Response, status: number): Promise<Envelope["error"]> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const { error } = JSON.parse(text) as Envelope;
  expect(error.type).toBeTypeOf("string");
  return error;
}

const doc = () => JSON.parse(JSON.stringify(DEFAULT_HARNESS)) as Record<string, unknown>;

describe("the harness registry's routes refuse bad input before the store", () => {
  it("an unknown key anywhere in the document: 400 naming the key", async () => {
    const { send } = createTestApp();
    const document = doc();
    document.router = { ...(document.router as object), shots: ["x"] };
    const error = await expectError(await send("POST", "/v1/harnesses", { document }), 400);
    expect(error).toMatchObject({ code: "unknown_parameter", param: "document.router.shots" });
    expect(error.message).toContain("shots");
    const top = await expectError(await send("POST", "/v1/harnesses", { document: doc(), colour: 1 }), 400);
    expect(top).toMatchObject({ code: "unknown_parameter", param: "colour" });
  });

  it("a malformed document: 400 with the field (schema, cross-field checks, step kinds)", async () => {
    const { send } = createTestApp();
    expect(await expectError(await send("POST", "/v1/harnesses", "{"), 400)).toMatchObject({
      code: "invalid_json",
    });
    expect(await expectError(await send("POST", "/v1/harnesses", {}), 400)).toMatchObject({
      param: "document",
    });
    const labels = { ...doc(), defaultLabel: "poetry" };
    expect(await expectError(await send("POST", "/v1/harnesses", { document: labels }), 400)).toMatchObject({
      param: "document.defaultLabel",
    });
    const steps = {
      ...doc(),
      turn: { steps: [{ kind: "route" }, { kind: "dance" }], stop: { maxSteps: 4 } },
    };
    const error = await expectError(await send("POST", "/v1/harnesses", { document: steps }), 400);
    expect(error).toMatchObject({ param: "document.turn.steps[1].kind" });
    expect(error.message).toContain('unknown step kind "dance"');
  });

  it("a specialist's output or tool policy that is malformed: 400 naming the field", async () => {
    const { send } = createTestApp();
    const withChat = (fields: Record<string, unknown>) => {
      const document = doc();
      const specialists = document.specialists as Record<string, object>;
      document.specialists = { ...specialists, chat: { ...specialists["chat"], ...fields } };
      return { document };
    };
    const extra = withChat({ output: { format: "json_object", strict: true } });
    expect(await expectError(await send("POST", "/v1/harnesses", extra), 400)).toMatchObject({
      code: "unknown_parameter",
      param: "document.specialists.chat.output.strict",
    });
    const notObject = withChat({ output: { format: "json_schema", schema: [] } });
    expect(await expectError(await send("POST", "/v1/harnesses", notObject), 400)).toMatchObject({
      param: "document.specialists.chat.output.schema",
    });
    const badName = withChat({ tools: { mode: "auto", allow: ["ok", "not ok"] } });
    expect(await expectError(await send("POST", "/v1/harnesses", badName), 400)).toMatchObject({
      param: "document.specialists.chat.tools.allow[1]",
    });
  });

  it(`a document over ${MAX_HARNESS_DOCUMENT_BYTES} bytes of canonical JSON: 413`, async () => {
    const { send } = createTestApp();
    const document = doc();
    document.router = {
      ...(document.router as object),
      systemPrompt: "x".repeat(MAX_HARNESS_DOCUMENT_BYTES),
    };
    const error = await expectError(await send("POST", "/v1/harnesses", { document }), 413);
    expect(error).toMatchObject({ code: "payload_too_large", param: "document" });
  });

  it("a malformed hash, a bad label name, a percent outside 0–100: 400", async () => {
    const { send } = createTestApp();
    for (const path of [
      "/v1/harnesses/abc",
      `/v1/harnesses/${HASH.toUpperCase()}`,
      `/v1/harnesses/${HASH}/diff/sha256:1`,
      "/v1/harness-labels/Prod",
      "/v1/harness-labels/-x/history",
    ])
      expect((await send("GET", path)).status, path).toBe(400);
    expect(
      await expectError(await send("PUT", "/v1/harness-labels/no%20spaces", { harness: HASH }), 400),
    ).toMatchObject({ param: "name" });
    for (const percent of [101, -1, 50.5]) {
      const body = { harness: HASH, canary: { harness: HASH, percent } };
      expect(await expectError(await send("PUT", "/v1/harness-labels/production", body), 400)).toMatchObject({
        param: "canary.percent",
      });
    }
    expect(
      await expectError(await send("PUT", "/v1/harness-labels/production", { harness: "v1" }), 400),
    ).toMatchObject({ param: "harness" });
    // The rollout guard's settings, each in its range (rollout-guard.ts).
    for (const [guard, param] of [
      [{ alpha: 0 }, "guard.alpha"],
      [{ beta: 0.9 }, "guard.beta"],
      [{ delta: 1 }, "guard.delta"],
      [{ minTurns: 2.5 }, "guard.minTurns"],
      [{ enabled: "yes" }, "guard.enabled"],
      [{ window: 10 }, "guard.window"],
    ] as const) {
      const body = { harness: HASH, guard };
      expect(
        await expectError(await send("PUT", "/v1/harness-labels/production", body), 400),
        param,
      ).toMatchObject({ param });
    }
  });

  it("a key without the `admin` scope may not push or move: 403", async () => {
    const { send } = createTestApp();
    const tenant = (await (
      await send("POST", "/v1/admin/tenants", { name: "chat only" }, ADMIN_TOKEN)
    ).json()) as { id: string };
    const { key } = (await (
      await send("POST", `/v1/admin/tenants/${tenant.id}/keys`, { scopes: ["chat"] }, ADMIN_TOKEN)
    ).json()) as { key: string };
    const push = await send("POST", "/v1/harnesses", { document: doc() }, key);
    expect(await expectError(push, 403)).toMatchObject({ code: "insufficient_scope" });
    const move = await send("PUT", "/v1/harness-labels/production", { harness: HASH }, key);
    expect(await expectError(move, 403)).toMatchObject({ code: "insufficient_scope" });
  });

  it("a global version needs the admin token, not a tenant key", async () => {
    const { send } = createTestApp();
    const push = await send("POST", "/v1/admin/harnesses", { document: doc() });
    expect(await expectError(push, 403)).toMatchObject({ code: "admin_token_required" });
  });

  it("a turn's or a conversation's pin that is malformed (400) or names nothing the tenant sees (404)", async () => {
    // Nothing is found; the turn routes must answer before admitting the turn (the limiter's `admit` throws).
    const { send } = createTestApp({
      getVersion: () => Promise.resolve(undefined),
      getLabel: () => Promise.resolve(undefined),
    });
    const chat = { model: "mol", messages: [{ role: "user", content: "hi" }] };
    const turn = { input: "hi" };
    for (const [path, body] of [
      ["/v1/chat/completions", chat],
      ["/v1/responses", turn],
    ] as const) {
      const malformed = await send("POST", path, body, DEV_KEY, { "x-mol-harness": "Not A Pin" });
      expect(await expectError(malformed, 400), path).toMatchObject({ param: "x-mol-harness" });
      const unknownHash = await send("POST", path, body, DEV_KEY, { "x-mol-harness": HASH });
      expect(await expectError(unknownHash, 404), path).toMatchObject({
        code: "harness_not_found",
        param: "x-mol-harness",
      });
      const unknownLabel = await send("POST", path, { ...body, metadata: { mol_harness: "canary" } });
      expect(await expectError(unknownLabel, 404), path).toMatchObject({
        code: "harness_label_not_found",
        param: "metadata.mol_harness",
      });
    }
    const conversation = await send("POST", "/v1/conversations", { metadata: { mol_harness: HASH } });
    expect(await expectError(conversation, 404)).toMatchObject({
      code: "harness_not_found",
      param: "metadata.mol_harness",
    });
  });
});

describe("GET /v1/harness-labels/{name}/guard", () => {
  const CANARY = `sha256:${"b".repeat(64)}`;
  const label = (canary: boolean) => ({
    tenantId: "dev",
    name: "production",
    harness: HASH,
    canary: canary ? { harness: CANARY, percent: 50 } : null,
    guard: null,
    revision: 2,
    updatedBy: "key",
    updatedAt: 1,
  });
  const categories = (feedback: number, failed: number) => ({
    turn_failed: failed,
    genui_rejected: 0,
    json_output_invalid: 0,
    tool_arguments_invalid: 0,
    check_failed: 0,
    feedback_negative: feedback,
  });
  type Guard = {
    settings: Record<string, unknown>;
    counts: { canary: { turns: number; failures: number; categories: Record<string, number> } } | null;
    statistic: { llr: number; boundary: number; p0: number; p1: number; roll_back: boolean } | null;
  };

  it("gives both arms' counts against the canary, the settings in force and the rule's statistic", async () => {
    const asked: string[] = [];
    const { send } = createTestApp({
      getLabel: (tenantId, name) => Promise.resolve(name === "production" ? label(true) : undefined),
      readRolloutCounts: (_tenantId, _name, canaryHarness) => {
        asked.push(canaryHarness);
        return Promise.resolve({
          production: { turns: 3, failures: 0, categories: categories(0, 0) },
          canary: { turns: 5, failures: 5, categories: categories(2, 4) },
        });
      },
    });
    const response = await send("GET", "/v1/harness-labels/production/guard");
    expect(response.status).toBe(200);
    const guard = (await response.json()) as Guard;
    expect(asked).toEqual([CANARY]);
    expect(guard).toMatchObject({
      object: "harness.label.guard",
      label: "production",
      harness: HASH,
      canary: { harness: CANARY, percent: 50 },
      settings: { enabled: true, alpha: 0.01, beta: 0.05, delta: 0.2, floor: 0.05, minTurns: 5 },
      counts: { canary: { turns: 5, failures: 5, categories: categories(2, 4) } },
    });
    // Five failures of five against a clean production: 5·ln 5 ≈ 8.05 past ln 95 ≈ 4.55.
    expect(guard.statistic?.llr).toBeCloseTo(5 * Math.log(5), 6);
    expect(guard.statistic?.boundary).toBeCloseTo(Math.log(95), 6);
    expect(guard.statistic).toMatchObject({ p0: 0.05, roll_back: true });
    expect(guard.statistic?.p1).toBeCloseTo(0.25, 9);
  });

  it("has no counts or statistic without a canary; 404 for a label the tenant does not have", async () => {
    const { send } = createTestApp({
      getLabel: (_tenantId, name) => Promise.resolve(name === "production" ? label(false) : undefined),
    });
    const none = (await (await send("GET", "/v1/harness-labels/production/guard")).json()) as Guard;
    expect(none).toMatchObject({ canary: null, counts: null, statistic: null });
    expect(none.settings).toMatchObject({ enabled: true, minTurns: 5 });
    const missing = await expectError(await send("GET", "/v1/harness-labels/other/guard"), 404);
    expect(missing.code).toBe("harness_label_not_found");
    await expectError(await send("GET", "/v1/harness-labels/Bad%20Name/guard"), 400);
  });
});
