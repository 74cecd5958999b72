import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { pickCanaryArm, readCanaryBucket } from "../../schema/harness/harness-registry.ts";
import { HARNESS_LABEL_TTL_MS } from "../../workers/src/harness-registry/choose-turn-harness.ts";
import { readJson } from "../harness/read-json.ts";
import { TEST_ADMIN_TOKEN, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * User feedback and the rollout guard over a real GPU node (llama.cpp on the generated tiny model): a label of the
 * `dev` tenant with a 50% canary that answers as well as production does, reached through a label pin. Every turn
 * answers, so the guard keeps the canary, until users reject the canary's answers: negative feedback counts once
 * per turn (`feedback_negative`, a failure of the turn) and rolls the canary back, as failed turns would. Bad
 * feedback (unknown or another tenant's response, a malformed body) stores nothing and counts nothing.
 */

const GUARD = { alpha: 0.01, beta: 0.05, delta: 0.2, floor: 0.05, minTurns: 5 };
const CANARY_TURNS = GUARD.minTurns;
const PRODUCTION_TURNS = 3;
const LABEL = "rated";

type Arm = "canary" | "production";
type Tally = { turns: number; failures: number; categories: Record<string, number> };
type Guard = {
  canary: { harness: string; percent: number } | null;
  settings: typeof GUARD & { enabled: boolean };
  counts: { production: Tally; canary: Tally } | null;
  statistic: { llr: number; boundary: number; p0: number; p1: number; roll_back: boolean } | null;
};
type ResponseObject = {
  id: string;
  status: string;
  mol: { harness?: { arm: Arm | null }; feedback?: { rating: string; comment?: string } };
};

let mesh: TestMesh;

const push = async (document: HarnessDocument) =>
  (await readJson<{ hash: string }>(await mesh.api("/v1/harnesses", { json: { document } }))).hash;

const variant = (tag: string): HarnessDocument => ({
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, systemPrompt: `${DEFAULT_HARNESS.router.systemPrompt} (${tag})` },
});

const guard = async (label = LABEL) => readJson<Guard>(await mesh.api(`/v1/harness-labels/${label}/guard`));

const feedback = (id: string, body: unknown, token?: string) =>
  mesh.api(`/v1/responses/${id}/feedback`, { json: body, ...(token === undefined ? {} : { token }) });

/** One turn per new conversation until `canary` turns on the canary arm and `production` on the other. */
async function turnsByArm(canary: number, production: number): Promise<{ id: string; arm: Arm }[]> {
  const done: { id: string; arm: Arm }[] = [];
  const count = (arm: Arm) => done.filter((t) => t.arm === arm).length;
  while (count("canary") < canary || count("production") < production) {
    const { id: conversation } = await readJson<{ id: string }>(
      await mesh.api("/v1/conversations", { json: {} }),
    );
    const arm = pickCanaryArm(await readCanaryBucket("dev", conversation), 50);
    if (count(arm) >= (arm === "canary" ? canary : production)) continue;
    const response = await readJson<ResponseObject>(
      await mesh.api("/v1/responses", {
        json: { conversation, input: "hello", max_output_tokens: 8 },
        headers: { "x-mol-harness": LABEL },
      }),
    );
    expect(response.mol.harness?.arm).toBe(arm);
    done.push({ id: response.id, arm });
  }
  return done;
}

beforeAll(async () => {
  mesh = await startTestMesh({ adminToken: TEST_ADMIN_TOKEN });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("feedback and the guarded rollout", () => {
  it("GET …/guard: 404 for a label the tenant does not have; no counts without a canary", async () => {
    await readJson(await mesh.api("/v1/harness-labels/nothing-here/guard"), 404);
    const v1 = await push(variant("v1"));
    await readJson(await mesh.api("/v1/harness-labels/plain", { method: "PUT", json: { harness: v1 } }));
    expect(await guard("plain")).toMatchObject({ canary: null, counts: null, statistic: null });
  });

  it("rolls back a canary whose answers users reject; bad feedback changes nothing", async () => {
    const production = await push(variant("v1"));
    const canary = await push(variant("v2"));
    await readJson(
      await mesh.api(`/v1/harness-labels/${LABEL}`, {
        method: "PUT",
        json: { harness: production, canary: { harness: canary, percent: 50 }, guard: GUARD },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, HARNESS_LABEL_TTL_MS + 200));
    const turns = await turnsByArm(CANARY_TURNS, PRODUCTION_TURNS);
    const canaryTurns = turns.filter((t) => t.arm === "canary").map((t) => t.id);
    const productionTurn = turns.find((t) => t.arm === "production")?.id ?? "";

    // Every turn answered: counted as it finished, no failure, the rule far from its boundary.
    const counted = async () => {
      for (;;) {
        const state = await guard();
        const { production: p, canary: c } = state.counts ?? {
          production: { turns: 0 },
          canary: { turns: 0 },
        };
        if (p.turns === PRODUCTION_TURNS && c.turns === CANARY_TURNS) return state;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const clean = await counted();
    expect(clean).toMatchObject({
      canary: { harness: canary, percent: 50 },
      settings: { ...GUARD, enabled: true },
      counts: { production: { failures: 0 }, canary: { failures: 0 } },
      statistic: { roll_back: false, p0: GUARD.floor },
    });
    expect(clean.counts?.canary.categories).toEqual({
      turn_failed: 0,
      genui_rejected: 0,
      json_output_invalid: 0,
      tool_arguments_invalid: 0,
      check_failed: 0,
      feedback_negative: 0,
    });

    // Bad input: an unknown response, another tenant's, a malformed body. Nothing stored, nothing counted.
    const first = canaryTurns[0] ?? "";
    const unknown = first.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    await readJson(await feedback(unknown, { rating: "negative" }), 404);
    const tenant = await readJson<{ id: string }>(
      await mesh.api("/v1/admin/tenants", { token: TEST_ADMIN_TOKEN, json: { name: "other" } }),
    );
    const { key } = await readJson<{ key: string }>(
      await mesh.api(`/v1/admin/tenants/${tenant.id}/keys`, { token: TEST_ADMIN_TOKEN, json: {} }),
    );
    await readJson(await feedback(first, { rating: "negative" }, key), 404);
    await readJson(await feedback(first, { rating: "bad" }), 400);
    await readJson(await feedback(first, { rating: "negative", comment: "x".repeat(2049) }), 400);
    const untouched = await readJson<ResponseObject>(await mesh.api(`/v1/responses/${first}`));
    expect(untouched.mol.feedback).toBeUndefined();
    expect((await guard()).counts).toEqual(clean.counts);

    // Positive feedback is shown, not counted (production's clean record is what the canary is measured against).
    const liked = await readJson<ResponseObject>(
      await feedback(productionTurn, { rating: "positive", comment: "spot on" }),
    );
    expect(liked.mol.feedback).toMatchObject({ rating: "positive", comment: "spot on" });
    expect((await guard()).counts).toEqual(clean.counts);

    // The same turn rejected twice counts once; the latest feedback is what the response shows.
    await readJson(await feedback(first, { rating: "negative" }));
    const again = await readJson<ResponseObject>(
      await feedback(first, { rating: "negative", comment: "still" }),
    );
    expect(again.mol.feedback).toMatchObject({ rating: "negative", comment: "still" });
    expect((await guard()).counts?.canary).toMatchObject({
      turns: CANARY_TURNS,
      failures: 1,
      categories: { feedback_negative: 1 },
    });

    // Users reject the canary's answers one by one: against a clean production (p0 the floor, 0.05) the fourth
    // rejected of five turns crosses the boundary (4·ln 5 + ln(0.75/0.95) ≈ 6.20 ≥ ln 95 ≈ 4.55).
    let rolledBack = false;
    for (const id of canaryTurns.slice(1)) {
      await readJson(await feedback(id, { rating: "negative" }));
      const label = await readJson<{ canary: unknown }>(await mesh.api(`/v1/harness-labels/${LABEL}`));
      if (label.canary === null) {
        rolledBack = true;
        break;
      }
    }
    const state = await guard();
    const history = await readJson<{ data: { actor: string; reason: string | null }[] }>(
      await mesh.api(`/v1/harness-labels/${LABEL}/history`),
    );
    expect({ rolledBack, state }).toMatchObject({ rolledBack: true, state: { canary: null, counts: null } });
    expect(history.data[0]?.actor).toBe("guard");
    expect(history.data[0]?.reason).toMatch(/^guard: SPRT rolled back the canary/);
  }, 150_000);
});
