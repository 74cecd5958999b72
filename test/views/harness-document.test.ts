import fc from "fast-check";
import { PROPERTY_LIMITS } from "./property-limits.ts";
import { describe, expect, it } from "vitest";
import { canonicalizeJson, hashHarness } from "../../schema/harness/content-hash.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import { readSummaryWait } from "../../schema/harness/harness-settings.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Same content, keys inserted in an order drawn from `seed` at every level. */
function shuffleKeys(value: Json, seed: number): Json {
  if (Array.isArray(value)) return value.map((item, i) => shuffleKeys(item, seed + i));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  const order = keys
    .map((key, i) => ({ key, rank: Math.sin(seed * 7919 + i * 104729) }))
    .sort((a, b) => a.rank - b.rank);
  return Object.fromEntries(order.map(({ key }, i) => [key, shuffleKeys(value[key] as Json, seed + i + 1)]));
}

/** Every leaf of a JSON value, with a changed copy of the whole document for each. */
function mutateEachLeaf(value: Json): Array<{ path: string; doc: Json }> {
  const out: Array<{ path: string; doc: Json }> = [];
  const visit = (node: Json, path: string, replace: (next: Json) => Json): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        visit(item, `${path}[${i}]`, (next) => replace(node.map((x, j) => (j === i ? next : x))));
      });
      out.push({ path: `${path}[+]`, doc: replace([...node, node[0] ?? "x"]) });
    } else if (node !== null && typeof node === "object") {
      for (const key of Object.keys(node))
        visit(node[key] as Json, `${path}.${key}`, (next) => replace({ ...node, [key]: next }));
    } else if (typeof node === "number") out.push({ path, doc: replace(node + 1) });
    else if (typeof node === "string") out.push({ path, doc: replace(`${node}x`) });
    else if (typeof node === "boolean") out.push({ path, doc: replace(!node) });
  };
  visit(value, "$", (next) => next);
  return out;
}

const asJson = (doc: HarnessDocument) => JSON.parse(JSON.stringify(doc)) as Json;

describe("the harness document", () => {
  it("accepts the default harness as it is", () => {
    expect(harnessDocumentSchema.parse(DEFAULT_HARNESS)).toEqual(DEFAULT_HARNESS);
    expect(DEFAULT_HARNESS.router).toMatchObject({ adapter: "l0", maxTokens: 24, reasoningMaxTokens: 0 });
    expect(DEFAULT_HARNESS.router.labels).toEqual(["chat", "agent", "coding", "genui"]);
    expect(DEFAULT_HARNESS.defaultLabel).toBe("chat");
  });

  it.each<[string, (d: HarnessDocument) => unknown]>([
    ["a wrong version", (d) => ({ ...d, version: "molmesh.harness.v0" })],
    [
      "labels that differ from the specialists",
      (d) => ({ ...d, router: { ...d.router, labels: ["chat", "agent", "coding"] } }),
    ],
    ["a default label outside the labels", (d) => ({ ...d, defaultLabel: "poetry" })],
    [
      "a specialist whose adapter is not its label",
      (d) => ({ ...d, specialists: { ...d.specialists, chat: { ...d.specialists.chat, adapter: "agent" } } }),
    ],
    [
      "a summary over 192 tokens",
      (d) => ({
        ...d,
        specialists: {
          ...d.specialists,
          chat: { ...d.specialists.chat, summary: { ...d.specialists.chat?.summary, maxTokens: 193 } },
        },
      }),
    ],
    [
      "a specialist budget that overflows the context at the summary hop",
      (d) => ({
        ...d,
        specialists: { ...d.specialists, chat: { ...d.specialists.chat, viewBudgetBytes: 4000 } },
      }),
    ],
    [
      "a router budget too small for one user line",
      (d) => ({ ...d, router: { ...d.router, viewBudgetBytes: 300 } }),
    ],
    [
      "route tokens that cannot hold the longest label",
      (d) => ({ ...d, router: { ...d.router, maxTokens: 5 } }),
    ],
    [
      "compaction fractions that leave no room",
      (d) => ({ ...d, compaction: { ...d.compaction, keepFullFraction: 0.7 } }),
    ],
    [
      "a summary line without {text}",
      (d) => ({ ...d, templates: { ...d.templates, summaryLine: "[{label}]" } }),
    ],
    ["a summary wait of an unknown mode", (d) => ({ ...d, summaryWait: { mode: "forever" } })],
    [
      "an interim summary wait with a wait bound",
      (d) => ({ ...d, summaryWait: { mode: "interim", maxMs: 50 } }),
    ],
    [
      "a bounded summary wait with an interim line size",
      (d) => ({ ...d, summaryWait: { mode: "bounded", interimMaxBytes: 64 } }),
    ],
    [
      "an interim line under 16 bytes",
      (d) => ({ ...d, summaryWait: { mode: "interim", interimMaxBytes: 8 } }),
    ],
    ["a summary wait bound of 0 ms", (d) => ({ ...d, summaryWait: { mode: "bounded", maxMs: 0 } })],
  ])("refuses %s", (_name, change) => {
    expect(harnessDocumentSchema.safeParse(change(DEFAULT_HARNESS)).success).toBe(false);
  });

  it("accepts either summary wait, and reads an absent one as interim", () => {
    for (const summaryWait of [
      { mode: "interim" },
      { mode: "interim", interimMaxBytes: 64 },
      { mode: "bounded" },
      { mode: "bounded", maxMs: 500 },
    ] as const) {
      const parsed = harnessDocumentSchema.parse({ ...DEFAULT_HARNESS, summaryWait });
      expect(readSummaryWait(parsed)).toEqual(summaryWait);
    }
    expect(DEFAULT_HARNESS.summaryWait).toBeUndefined();
    expect(readSummaryWait(DEFAULT_HARNESS)).toEqual({ mode: "interim" });
  });

  it("hashes to sha256:<64 hex> of the canonical JSON", async () => {
    const hash = await hashHarness(DEFAULT_HARNESS);
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(canonicalizeJson({ b: [2, { d: 1, c: "é" }], a: null })).toBe(
      '{"a":null,"b":[2,{"c":"é","d":1}]}',
    );
    // Known vector: SHA-256 of "{}".
    expect(await hashHarness({} as HarnessDocument)).toBe(
      "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
    );
  });

  it("hashes the same whatever the key order", async () => {
    const base = await hashHarness(DEFAULT_HARNESS);
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        const shuffled = shuffleKeys(asJson(DEFAULT_HARNESS), seed) as unknown as HarnessDocument;
        expect(await hashHarness(shuffled)).toBe(base);
      }),
      { numRuns: 30, ...PROPERTY_LIMITS },
    );
  });

  it("hashes differently when any single setting changes", async () => {
    const base = await hashHarness(DEFAULT_HARNESS);
    const variants = mutateEachLeaf(asJson(DEFAULT_HARNESS));
    expect(variants.length).toBeGreaterThan(60);
    const hashes = await Promise.all(
      variants.map(({ doc }) => hashHarness(doc as unknown as HarnessDocument)),
    );
    for (const hash of hashes) expect(hash).not.toBe(base);
    expect(new Set(hashes).size).toBe(variants.length);
  });
});
