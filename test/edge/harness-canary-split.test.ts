import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMolmesh } from "../../infra/cli/run-molmesh.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { pickCanaryArm, readCanaryBucket } from "../../schema/harness/harness-registry.ts";
import { createTextBuffer } from "../cli/text-buffer.ts";
import { createTenantKey } from "../harness/create-tenant-key.ts";
import { readJson } from "../harness/read-json.ts";
import { TEST_ADMIN_TOKEN, TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * The split test, end to end: a real edge (workerd with local D1 via `wrangler dev`) and a real GPU node
 * (llama.cpp on the tiny model). Two versions are pushed and `production` is labelled with a 50 % canary (with
 * the CLI, over HTTP); then 200 conversations × 3 turns, each turn a forced specialist (`mol:chat`) with 1 output
 * token, {@link WIDTH} conversations at a time:
 *
 * - the canary's share of the 200 conversations lies within the exact two-sided binomial bounds at alpha 1e-6
 *   (n = 200, p = 0.5: 66 ≤ k ≤ 134), and each conversation is on the arm its bucket says (`pickCanaryArm`);
 * - each conversation's 3 turns run under one version, and every turn records its hash: in the response's `mol`
 *   and in what is stored (the conversation's assistant items, and the response read back by id);
 * - a request's pin overrides the label for that turn only;
 * - a rollback (through this edge, so no wait for the label cache's TTL) moves every canary conversation's next
 *   turn to production at once;
 * - another tenant's key sees none of it: 404 on both versions, their diff, the label and a pin to either hash.
 *
 * Conversation ids are random, so the canary's count differs run to run; one outside the bounds has probability
 * under 1e-6.
 */

const CONVERSATIONS = 200;
const TURNS = 3;
const ALPHA = 1e-6;
/** Conversations in flight at once: enough to keep the node busy, few enough for a 2-core box. */
const WIDTH = 8;

/** The exact two-sided acceptance region [lo, hi] of Binomial(n, p): each tail outside it has probability ≤ alpha / 2. */
function binomialBounds(n: number, p: number, alpha: number): [number, number] {
  const pmf: number[] = [];
  let term = (1 - p) ** n;
  for (let k = 0; k <= n; k++) {
    pmf.push(term);
    term *= ((n - k) / (k + 1)) * (p / (1 - p));
  }
  let lo = 0;
  for (let below = 0; below + (pmf[lo] ?? 0) <= alpha / 2; lo++) below += pmf[lo] ?? 0;
  let hi = n;
  for (let above = 0; above + (pmf[hi] ?? 0) <= alpha / 2; hi--) above += pmf[hi] ?? 0;
  return [lo, hi];
}

/**
 * The default harness with a tagged router prompt, and summaries of 1 token: every turn's summary still runs (and
 * lands in the timeline), but the node spends next to nothing on it: the 600 turns take under a minute on a
 * 2-core box instead of about four.
 */
const variant = (tag: string): HarnessDocument => ({
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, systemPrompt: `${DEFAULT_HARNESS.router.systemPrompt} (${tag})` },
  specialists: Object.fromEntries(
    Object.entries(DEFAULT_HARNESS.specialists).map(([label, specialist]) => [
      label,
      { ...specialist, summary: { ...specialist.summary, maxTokens: 1 } },
    ]),
  ),
});

type MolHarness = { hash: string; label: string | null; arm: string | null; source: string };
type Mol = { harnessHash: string; harness?: MolHarness };
type Envelope = { error: { code: string; param: string | null } };

let mesh: TestMesh;
let keyB: string;

/** The CLI in this process against the real edge, over HTTP. */
async function cli(...argv: string[]): Promise<string> {
  const stdout = createTextBuffer();
  const stderr = createTextBuffer();
  const code = await runMolmesh([...argv, "--base-url", mesh.edge.url, "--api-key", TEST_API_KEY], {
    fetch: (input, init) => fetch(input, init),
    env: {},
    stdout,
    stderr,
    color: false,
    openTerminal: () => {
      throw new Error("no terminal");
    },
  });
  expect(code, stderr.text()).toBe(0);
  return stdout.text();
}

const call = async <T>(path: string, json?: unknown): Promise<T> =>
  readJson<T>(await mesh.api(path, json === undefined ? {} : { json }));

/** One turn of 1 token on the forced `chat` specialist; its response id and `mol`. */
const turn = async (conversation: string, headers: Record<string, string> = {}) =>
  readJson<{ id: string; mol: Mol }>(
    await mesh.api("/v1/responses", {
      json: { conversation, model: "mol:chat", input: "hi", max_output_tokens: 1 },
      headers,
    }),
  );

/** The hashes the conversation's assistant items recorded, oldest first. */
async function recordedHashes(conversation: string): Promise<string[]> {
  const items = await call<{ data: { role?: string; mol?: Mol }[] }>(
    `/v1/conversations/${conversation}/items?order=asc&limit=100`,
  );
  return items.data.filter((item) => item.role === "assistant").map((item) => item.mol?.harnessHash ?? "");
}

/** `run` over `items`, `width` at a time. */
async function eachLimited<T>(items: readonly T[], width: number, run: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await run(items[next++] as T);
    }),
  );
}

beforeAll(async () => {
  // More slots and waiting room than the default test node: WIDTH conversations' answers and summaries at once.
  mesh = await startTestMesh({
    adminToken: TEST_ADMIN_TOKEN,
    nodeOptions: { slotsPerAdapter: 4, maxWaitingPerAdapter: 4 * WIDTH },
  });
  keyB = await createTenantKey(mesh, "tenant b", ["conversations", "responses"]);
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("a production label with a 50 % canary, through a real edge and D1", () => {
  it("splits 200 conversations × 3 turns within binomial bounds, sticky and recorded; pins, rollback, tenancy", async () => {
    expect(binomialBounds(CONVERSATIONS, 0.5, ALPHA)).toEqual([66, 134]);
    const dir = await mkdtemp(join(tmpdir(), "molmesh-split-"));
    await writeFile(join(dir, "v1.json"), JSON.stringify(variant("e2e v1")));
    await writeFile(join(dir, "v2.json"), JSON.stringify(variant("e2e v2")));
    const v1 = (await cli("harness", "push", join(dir, "v1.json"))).trim();
    const v2 = (await cli("harness", "push", join(dir, "v2.json"), "--parent", v1, "-m", "v2")).trim();
    await cli("harness", "label", "production", v1);
    await cli("harness", "label", "production", v1, "--canary", v2, "--percent", "50");

    const conversations: string[] = [];
    await eachLimited(Array.from({ length: CONVERSATIONS }), WIDTH, async () => {
      conversations.push((await call<{ id: string }>("/v1/conversations", {})).id);
    });
    const arms = new Map<string, string>();
    const started = performance.now();
    await eachLimited(conversations, WIDTH, async (conversation) => {
      const arm = pickCanaryArm(await readCanaryBucket("dev", conversation), 50);
      const expected = { hash: arm === "canary" ? v2 : v1, label: "production", arm, source: "label" };
      const ids: string[] = [];
      for (let i = 0; i < TURNS; i++) {
        const { id, mol } = await turn(conversation);
        expect(mol.harness).toMatchObject(expected);
        expect(mol.harnessHash).toBe(expected.hash);
        ids.push(id);
      }
      expect(await recordedHashes(conversation)).toEqual(Array<string>(TURNS).fill(expected.hash));
      const stored = await call<{ mol: Mol }>(`/v1/responses/${ids.at(-1) ?? ""}`);
      expect(stored.mol.harness).toMatchObject(expected);
      arms.set(conversation, expected.hash);
    });
    const seconds = (performance.now() - started) / 1000;
    const canary = [...arms.values()].filter((hash) => hash === v2).length;
    console.info(
      `split: ${String(CONVERSATIONS * TURNS)} turns in ${seconds.toFixed(1)} s; canary ${String(canary)}/${String(CONVERSATIONS)}`,
    );
    expect(canary).toBeGreaterThanOrEqual(66);
    expect(canary).toBeLessThanOrEqual(134);

    // A request's pin wins over the label for its turn; the next unpinned turn is on the arm again.
    const onProduction = conversations.find((conversation) => arms.get(conversation) === v1) ?? "";
    const pinned = await turn(onProduction, { "x-mol-harness": v2 });
    expect(pinned.mol.harness).toMatchObject({ hash: v2, label: null, arm: null, source: "request" });
    expect((await recordedHashes(onProduction)).at(-1)).toBe(v2);
    expect((await turn(onProduction)).mol.harness?.hash).toBe(v1);

    // The rollback went through this edge: every canary conversation's next turn is on production at once.
    expect(await cli("harness", "rollback", "production", "--reason", "split test")).toContain(
      `production → ${v1}  revision 3`,
    );
    const onCanary = conversations.filter((conversation) => arms.get(conversation) === v2);
    await eachLimited(onCanary, WIDTH, async (conversation) => {
      const { mol } = await turn(conversation);
      expect(mol.harness).toMatchObject({
        hash: v1,
        label: "production",
        arm: "production",
        source: "label",
      });
      expect((await recordedHashes(conversation))[TURNS]).toBe(v1);
    });
    expect(await cli("harness", "history", "production")).toMatch(/^hlm_\d+ {2}r3 .* rollback: split test\n/);

    // Another tenant sees none of it.
    const asB = (path: string, init: RequestInit & { json?: unknown } = {}) =>
      mesh.api(path, { ...init, token: keyB });
    for (const hash of [v1, v2]) {
      const missing = await readJson<Envelope>(await asB(`/v1/harnesses/${hash}`), 404);
      expect(missing.error.code).toBe("harness_not_found");
    }
    await readJson<Envelope>(await asB(`/v1/harnesses/${v1}/diff/${v2}`), 404);
    const label = await readJson<Envelope>(await asB("/v1/harness-labels/production"), 404);
    expect(label.error.code).toBe("harness_label_not_found");
    const conversationB = (await readJson<{ id: string }>(await asB("/v1/conversations", { json: {} }))).id;
    for (const hash of [v1, v2]) {
      const refused = await readJson<Envelope>(
        await asB("/v1/responses", {
          json: { conversation: conversationB, model: "mol:chat", input: "hi", max_output_tokens: 1 },
          headers: { "x-mol-harness": hash },
        }),
        404,
      );
      expect(refused.error).toMatchObject({ code: "harness_not_found", param: "x-mol-harness" });
    }
    const own = await readJson<{ mol: Mol }>(
      await asB("/v1/responses", {
        json: { conversation: conversationB, model: "mol:chat", input: "hi", max_output_tokens: 1 },
      }),
    );
    expect(own.mol.harness?.source).toBe("default");
  }, 300_000);
});
