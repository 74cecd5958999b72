import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { pickCanaryArm, readCanaryBucket } from "../../schema/harness/harness-registry.ts";
import { HARNESS_LABEL_TTL_MS } from "../../workers/src/harness-registry/choose-turn-harness.ts";
import { createTenantKey } from "../harness/create-tenant-key.ts";
import { readJson } from "../harness/read-json.ts";
import { TEST_ADMIN_TOKEN, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * Which harness a turn runs under, over a real GPU node (llama.cpp on the generated tiny model): the tenant's
 * production label and its sticky canary, a pin on the request and on the conversation, and another tenant's
 * version refused before anything is stored. The dev key's tenant is `dev`.
 */

type HopAdapter = { hop: string; adapter: string; revision: string | null };
type MolHarness = {
  hash: string;
  label: string | null;
  arm: string | null;
  source: string;
  adapters: HopAdapter[];
};
type Mol = {
  harnessHash: string;
  harness?: MolHarness;
  label: string;
  revision?: string;
  summary: { status: string };
};
type Envelope = { error: { code: string; param: string | null } };

let mesh: TestMesh;
let keyB: string;
let v1: string;
let v2: string;

const newConversation = async (metadata: Record<string, string> = {}, token?: string) =>
  (
    await readJson<{ id: string }>(
      await mesh.api("/v1/conversations", { json: { metadata }, ...(token === undefined ? {} : { token }) }),
    )
  ).id;

/** One short turn; its `mol`. */
const turn = async (...args: Parameters<typeof turnWithId>): Promise<Mol> => (await turnWithId(...args)).mol;

/** One short turn; its response id and `mol`. */
async function turnWithId(
  conversation: string,
  options: { headers?: Record<string, string>; metadata?: Record<string, string>; token?: string } = {},
): Promise<{ id: string; mol: Mol }> {
  const response = await mesh.api("/v1/responses", {
    json: {
      conversation,
      input: "hello",
      max_output_tokens: 8,
      ...(options.metadata ? { metadata: options.metadata } : {}),
    },
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  return readJson<{ id: string; mol: Mol }>(response);
}

const variant = (tag: string): HarnessDocument => ({
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, systemPrompt: `${DEFAULT_HARNESS.router.systemPrompt} (${tag})` },
});

beforeAll(async () => {
  mesh = await startTestMesh({ adminToken: TEST_ADMIN_TOKEN });
  keyB = await createTenantKey(mesh, "tenant b", ["conversations", "responses"]);
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

describe("the harness a turn runs under", () => {
  it("is the built-in default while the tenant has no production label", async () => {
    const mol = await turn(await newConversation());
    expect(mol.harness).toMatchObject({ hash: mol.harnessHash, label: null, arm: null, source: "default" });
  });

  it("lists each hop's adapter as the harness named it and the revision the node served", async () => {
    const { id, mol } = await turnWithId(await newConversation());
    const harness = DEFAULT_HARNESS;
    const answering = harness.specialists[mol.label]?.adapter ?? "";
    const served = /^sha256:[0-9a-f]+$/;
    expect(mol.harness?.adapters).toEqual([
      { hop: "route", adapter: harness.router.adapter, revision: expect.stringMatching(served) as unknown },
      { hop: "answer", adapter: answering, revision: mol.revision },
    ]);
    expect(mol.revision).toMatch(served);
    // The summary lands after the answer; the stored turn lists it once it has.
    let stored = mol;
    for (let i = 0; i < 100 && stored.summary.status === "pending"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stored = (await readJson<{ mol: Mol }>(await mesh.api(`/v1/responses/${id}`))).mol;
    }
    expect(stored.summary.status).toBe("ready");
    expect(stored.harness?.adapters.map(({ hop, adapter }) => [hop, adapter])).toEqual([
      ["route", harness.router.adapter],
      ["answer", answering],
      ["summary", answering],
    ]);
    expect(stored.harness?.adapters[2]?.revision).toBe(mol.revision);
  });

  it("is the production label's, its canary taking a sticky share of conversations", async () => {
    v1 = (
      await readJson<{ hash: string }>(await mesh.api("/v1/harnesses", { json: { document: variant("v1") } }))
    ).hash;
    v2 = (
      await readJson<{ hash: string }>(await mesh.api("/v1/harnesses", { json: { document: variant("v2") } }))
    ).hash;
    await readJson(
      await mesh.api("/v1/harness-labels/production", {
        method: "PUT",
        json: { harness: v1, canary: { harness: v2, percent: 50 }, reason: "canary v2" },
      }),
    );
    // Within the label cache's TTL every isolate sees the move (the writer's at once).
    await new Promise((resolve) => setTimeout(resolve, HARNESS_LABEL_TTL_MS + 200));
    const arms = new Set<string>();
    // Until both arms have been seen (at most 16 conversations: each is 50/50, ids are random).
    for (let i = 0; i < 16 && arms.size < 2; i++) {
      const conversation = await newConversation();
      const arm = pickCanaryArm(await readCanaryBucket("dev", conversation), 50);
      const expected = { hash: arm === "canary" ? v2 : v1, label: "production", arm, source: "label" };
      const first = await turn(conversation);
      expect(first.harness).toMatchObject(expected);
      expect(first.harnessHash).toBe(expected.hash);
      // The same conversation stays on its arm while the split is unchanged.
      expect((await turn(conversation)).harness).toMatchObject(expected);
      arms.add(arm);
    }
    expect([...arms].sort()).toEqual(["canary", "production"]);
  });

  it("is a request's pin first (header or metadata), then the conversation's pin", async () => {
    const conversation = await newConversation();
    const byHeader = await turn(conversation, { headers: { "x-mol-harness": v2 } });
    expect(byHeader.harness).toMatchObject({ hash: v2, label: null, arm: null, source: "request" });
    // The views rebuild under the other version for the next turn; the turn answers as usual.
    const byMetadata = await turn(conversation, { metadata: { mol_harness: v1 } });
    expect(byMetadata.harness).toMatchObject({ hash: v1, label: null, arm: null, source: "request" });

    const pinned = await newConversation({ mol_harness: v2 });
    expect((await turn(pinned)).harness).toMatchObject({
      hash: v2,
      label: null,
      arm: null,
      source: "conversation",
    });
    const overridden = await turn(pinned, { headers: { "x-mol-harness": v1 } });
    expect(overridden.harness?.source).toBe("request");
    expect(overridden.harnessHash).toBe(v1);
  });

  it("keeps an untouched adapter's KV across a harness change; a changed one is prefilled again", async () => {
    type HopUsage = { promptTokens: number; cachedPromptTokens: number };
    const push = async (document: HarnessDocument) =>
      (await readJson<{ hash: string }>(await mesh.api("/v1/harnesses", { json: { document } }))).hash;
    const a = await push(variant("kv"));
    const chat = DEFAULT_HARNESS.specialists.chat;
    if (!chat) throw new Error("the default harness has no chat specialist");
    const b = await push({
      ...variant("kv"),
      specialists: { ...DEFAULT_HARNESS.specialists, chat: { ...chat, systemPrompt: "Chat, changed." } },
    });
    const conversation = await newConversation();
    const answer = async (model: string, pin: string): Promise<HopUsage> => {
      const response = await mesh.api("/v1/responses", {
        json: { conversation, model, input: "tell me more", max_output_tokens: 4 },
        headers: { "x-mol-harness": pin },
      });
      const mol = (await readJson<{ mol: Mol & { usage: { answer?: HopUsage } } }>(response)).mol;
      expect(mol.harnessHash).toBe(pin);
      if (!mol.usage.answer) throw new Error("no answer usage");
      return mol.usage.answer;
    };
    const codingA = await answer("mol:coding", a);
    const chatA = await answer("mol:chat", a);
    // B leaves coding's part alone: its prompt under B extends its last one under A, on the node's warm slot.
    const codingB = await answer("mol:coding", b);
    expect(codingB.cachedPromptTokens).toBeGreaterThanOrEqual(codingA.promptTokens - 8);
    // Chat's system line changed: its prompt shares only what comes before that line with its last one.
    const chatB = await answer("mol:chat", b);
    expect(chatB.cachedPromptTokens).toBeLessThan(chatA.promptTokens - 8);
  });

  it("never another tenant's: its pin is a 404 and nothing is stored; without a label it is the default", async () => {
    const conversation = await newConversation({}, keyB);
    const refused = await readJson<Envelope>(
      await mesh.api("/v1/responses", {
        token: keyB,
        json: { conversation, input: "hello", max_output_tokens: 8 },
        headers: { "x-mol-harness": v1 },
      }),
      404,
    );
    expect(refused.error).toMatchObject({ code: "harness_not_found", param: "x-mol-harness" });
    const items = await readJson<{ data: unknown[] }>(
      await mesh.api(`/v1/conversations/${conversation}/items`, { token: keyB }),
    );
    expect(items.data).toEqual([]);
    const pinnedToA = await readJson<Envelope>(
      await mesh.api("/v1/conversations", { token: keyB, json: { metadata: { mol_harness: v1 } } }),
      404,
    );
    expect(pinnedToA.error.param).toBe("metadata.mol_harness");
    expect((await turn(conversation, { token: keyB })).harness?.source).toBe("default");
  });
});
