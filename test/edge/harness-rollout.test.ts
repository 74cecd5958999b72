import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { pickCanaryArm, readCanaryBucket } from "../../schema/harness/harness-registry.ts";
import { HARNESS_LABEL_TTL_MS } from "../../workers/src/harness-registry/choose-turn-harness.ts";
import { readJson } from "../harness/read-json.ts";
import { TEST_ADMIN_TOKEN, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";
import { startWebhookReceiver, type ReceivedWebhook } from "../harness/start-webhook-receiver.ts";

/**
 * The guarded rollout over a real GPU node (llama.cpp on the generated tiny model): two labels of the `dev` tenant,
 * each with a 50% canary and the same guard (α 0.01, β 0.05, δ 0.2, floor 0.05, at least 5 canary turns), reached
 * through a label pin (`x-mol-harness`). One canary's program stops after its route step, so every answer fails;
 * the guard rolls it back within 5 canary turns, with the history entry and the `harness.rolled_back` webhook. The
 * other canary differs from production in its router prompt only; over the same turns it stays.
 */

const GUARD = { alpha: 0.01, beta: 0.05, delta: 0.2, floor: 0.05, minTurns: 5 };
/** Canary and production turns per label. */
const CANARY_TURNS = GUARD.minTurns;
const PRODUCTION_TURNS = 3;

let mesh: TestMesh;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

type Label = { harness: string; canary: { harness: string; percent: number } | null; revision: number };
type Move = { actor: string; reason: string | null; from: Label | null; to: Label; revision: number };
type RolledBack = {
  type: string;
  data: {
    label: string;
    revision: number;
    harness: string;
    canary_harness: string;
    reason: string;
    statistic: { llr: number; boundary: number; canary: { turns: number; failures: number } };
  };
};

const push = async (document: HarnessDocument) =>
  (await readJson<{ hash: string }>(await mesh.api("/v1/harnesses", { json: { document } }))).hash;

const variant = (tag: string): HarnessDocument => ({
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, systemPrompt: `${DEFAULT_HARNESS.router.systemPrompt} (${tag})` },
});

/** A program that stops after its route step: no answer, so every turn fails. */
const broken: HarnessDocument = {
  ...variant("broken"),
  turn: { steps: [{ kind: "route" }, { kind: "answer" }], stop: { maxSteps: 1 } },
};

/** Conversations until `canary` on the canary arm and `production` on the other (the split is a hash: ~50/50). */
async function conversationsByArm(
  canary: number,
  production: number,
): Promise<{ id: string; arm: "canary" | "production" }[]> {
  const picked: { id: string; arm: "canary" | "production" }[] = [];
  let c = 0;
  let p = 0;
  while (c < canary || p < production) {
    const { id } = await readJson<{ id: string }>(await mesh.api("/v1/conversations", { json: {} }));
    const arm = pickCanaryArm(await readCanaryBucket("dev", id), 50);
    if (arm === "canary" && c < canary) {
      c++;
      picked.push({ id, arm });
    } else if (arm === "production" && p < production) {
      p++;
      picked.push({ id, arm });
    }
  }
  return picked;
}

/** One turn of `conversation` through the label: whether it answered, and what came back. */
async function turn(conversation: string, label: string): Promise<{ ok: boolean; body: string }> {
  const response = await mesh.api("/v1/responses", {
    json: { conversation, input: "hello", max_output_tokens: 8 },
    headers: { "x-mol-harness": label },
  });
  const body = await response.text();
  const status = (JSON.parse(body) as { status?: string }).status;
  // `incomplete` (the 8-token cap) is an answer too.
  return { ok: response.status === 200 && (status === "completed" || status === "incomplete"), body };
}

async function until<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const history = async (label: string) =>
  (await readJson<{ data: Move[] }>(await mesh.api(`/v1/harness-labels/${label}/history`))).data;

beforeAll(async () => {
  mesh = await startTestMesh({
    adminToken: TEST_ADMIN_TOKEN,
    edgeVars: { MOL_WEBHOOK_ALLOW_LOOPBACK: "true" },
  });
  receiver = await startWebhookReceiver();
  await readJson(
    await mesh.api("/v1/webhook_endpoints", { json: { url: receiver.url, events: ["harness.rolled_back"] } }),
  );
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await receiver?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("the guarded rollout", () => {
  it("refuses guard settings out of range", async () => {
    const v1 = await push(variant("v1"));
    const refused = await readJson<{ error: { param: string } }>(
      await mesh.api("/v1/harness-labels/risky", {
        method: "PUT",
        json: { harness: v1, guard: { alpha: 2 } },
      }),
      400,
    );
    expect(refused.error.param).toBe("guard.alpha");
  });

  it(`rolls back a canary that breaks every answer within ${CANARY_TURNS} canary turns; keeps a harmless one`, async () => {
    const production = await push(variant("v1"));
    const harmful = await push(broken);
    const harmless = await push(variant("v2"));
    for (const [label, canary] of [
      ["risky", harmful],
      ["safe", harmless],
    ] as const) {
      const set = await readJson<{ guard: typeof GUARD }>(
        await mesh.api(`/v1/harness-labels/${label}`, {
          method: "PUT",
          json: {
            harness: production,
            canary: { harness: canary, percent: 50 },
            guard: GUARD,
            reason: "canary",
          },
        }),
      );
      expect(set.guard).toMatchObject(GUARD);
    }
    await new Promise((resolve) => setTimeout(resolve, HARNESS_LABEL_TTL_MS + 200));

    // One turn per conversation, each label its own conversations: the harmful canary fails every one of its
    // turns; everything else answers.
    for (const label of ["risky", "safe"]) {
      for (const { id, arm } of await conversationsByArm(CANARY_TURNS, PRODUCTION_TURNS)) {
        const { ok, body } = await turn(id, label);
        expect(ok, `${label} ${arm}: ${body}`).toBe(label === "safe" || arm === "production");
      }
    }

    // Counted as each turn finishes (after its response): the rollback lands within moments of the last one.
    const rolledBack = await until(async () => {
      const label = await readJson<Label>(await mesh.api("/v1/harness-labels/risky"));
      return label.canary === null ? label : undefined;
    }, 10_000);
    expect(rolledBack).toMatchObject({ harness: production, canary: null });
    const [move] = await history("risky");
    expect(move).toMatchObject({
      actor: "guard",
      from: { harness: production, canary: { harness: harmful, percent: 50 } },
      to: { harness: production, canary: null },
    });
    expect(move?.reason).toMatch(/^guard: SPRT rolled back the canary \(llr /);

    await receiver.waitFor((all: ReceivedWebhook[]) => all.length > 0, 20_000);
    const events = receiver.received.map((h) => JSON.parse(h.body) as RolledBack);
    expect(events).toHaveLength(1);
    const event = events[0] as RolledBack;
    expect(event.type).toBe("harness.rolled_back");
    expect(event.data).toMatchObject({
      label: "risky",
      harness: production,
      canary_harness: harmful,
      revision: move?.revision,
      reason: move?.reason,
    });
    expect(event.data.statistic.llr).toBeGreaterThanOrEqual(event.data.statistic.boundary);
    expect(event.data.statistic.canary.turns).toBeLessThanOrEqual(CANARY_TURNS);
    expect(event.data.statistic.canary.failures).toBe(event.data.statistic.canary.turns);

    // The harmless canary, over the same turns: still in place, moved by no one but its setter.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const safe = await readJson<Label>(await mesh.api("/v1/harness-labels/safe"));
    expect(safe.canary).toEqual({ harness: harmless, percent: 50 });
    expect((await history("safe")).map((m) => m.actor)).not.toContain("guard");
  }, 90_000);
});
