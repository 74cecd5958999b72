import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hashHarness } from "../../schema/harness/content-hash.ts";
import { DEFAULT_HARNESS, buildDefaultHarness } from "../../schema/harness/default-harness.ts";
import {
  HARNESS_HASH_PATTERN,
  MAX_HARNESS_DOCUMENT_BYTES,
  harnessLabelNameSchema,
  parseHarnessDocument,
  pickCanaryArm,
  readCanaryBucket,
} from "../../schema/harness/harness-registry.ts";
import { PROPERTY_LIMITS } from "../views/property-limits.ts";

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("a harness document in the registry", () => {
  it("is addressed by sha256: of its canonical JSON, the hash a turn under it records", async () => {
    const parsed = await parseHarnessDocument(clone(DEFAULT_HARNESS));
    if (!parsed.ok) throw new Error("the default harness was refused");
    expect(parsed.hash).toMatch(HARNESS_HASH_PATTERN);
    expect(parsed.hash).toBe(await hashHarness(DEFAULT_HARNESS));
    expect(JSON.parse(parsed.canonical)).toEqual(DEFAULT_HARNESS);
    expect(parsed.bytes).toBe(new TextEncoder().encode(parsed.canonical).length);
  });

  it("gives the same hash whatever the key order, and another for another document", async () => {
    const reversed = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reversed)
        : value !== null && typeof value === "object"
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([k, v]) => [k, reversed(v)]),
            )
          : value;
    const a = await parseHarnessDocument(clone(DEFAULT_HARNESS));
    const b = await parseHarnessDocument(reversed(clone(DEFAULT_HARNESS)));
    const other = await parseHarnessDocument(buildDefaultHarness({ family: "chatml", contextTokens: 8192 }));
    expect(a.ok && b.ok && other.ok).toBe(true);
    if (!a.ok || !b.ok || !other.ok) return;
    expect(b.hash).toBe(a.hash);
    expect(b.canonical).toBe(a.canonical);
    expect(other.hash).not.toBe(a.hash);
  });

  it.each([
    ["at the top", (d: Record<string, unknown>) => ({ ...d, extra: 1 }), [], "extra"],
    [
      "in the router",
      (d: Record<string, unknown>) => ({ ...d, router: { ...(d.router as object), shots: [] } }),
      ["router"],
      "shots",
    ],
    [
      "in a specialist's sampling",
      (d: Record<string, unknown>) => {
        const doc = clone(d) as { specialists: { chat: { sampling: Record<string, unknown> } } };
        doc.specialists.chat.sampling.minP = 0.1;
        return doc;
      },
      ["specialists", "chat", "sampling"],
      "minP",
    ],
    [
      "in the templates",
      (d: Record<string, unknown>) => ({ ...d, templates: { ...(d.templates as object), bos: "<s>" } }),
      ["templates"],
      "bos",
    ],
  ])("refuses an unknown key %s, naming it", async (_where, change, path, key) => {
    const parsed = await parseHarnessDocument(change(clone(DEFAULT_HARNESS)));
    expect(parsed.ok).toBe(false);
    if (parsed.ok || parsed.error !== "invalid") throw new Error("expected an invalid document");
    expect(parsed.issues).toContainEqual(
      expect.objectContaining({ code: "unrecognized_keys", path, keys: [key] }),
    );
  });

  it("refuses, never throws on, a document whose fields fail before the checks across them could read them", async () => {
    const doc = clone(DEFAULT_HARNESS) as unknown as {
      specialists: Record<string, { adapter: string }>;
      router: { labels: string[] };
    };
    doc.specialists["x-y"] = { ...doc.specialists.chat, adapter: "" };
    doc.router.labels.push("x-y");
    const parsed = await parseHarnessDocument(doc);
    expect(parsed).toMatchObject({ ok: false, error: "invalid" });
    if (parsed.ok || parsed.error !== "invalid") return;
    expect(parsed.issues.map((issue) => issue.path.join("."))).toEqual(["specialists.x-y.adapter"]);
  });

  it(`refuses a document over ${MAX_HARNESS_DOCUMENT_BYTES} bytes of canonical JSON before validating it`, async () => {
    const atCap = { pad: "x".repeat(MAX_HARNESS_DOCUMENT_BYTES - '{"pad":""}'.length) };
    // At the cap it is only invalid (an unknown document); one byte more and it is too large.
    expect(await parseHarnessDocument(atCap)).toMatchObject({ ok: false, error: "invalid" });
    expect(await parseHarnessDocument({ pad: `${atCap.pad}x` })).toEqual({
      ok: false,
      error: "too_large",
      bytes: MAX_HARNESS_DOCUMENT_BYTES + 1,
    });
    // Bytes, not characters: two-byte characters count twice.
    const wide = { pad: "é".repeat(MAX_HARNESS_DOCUMENT_BYTES / 2) };
    expect(await parseHarnessDocument(wide)).toMatchObject({ ok: false, error: "too_large" });
  });

  it("names labels with [a-z0-9._-], never a colon, so a label never reads as a hash", () => {
    for (const name of ["production", "staging", "canary-2", "v1.2", "0"])
      expect(harnessLabelNameSchema.safeParse(name).success, name).toBe(true);
    for (const name of ["", "Production", "sha256:abc", "a/b", "-x", "x".repeat(65), "prod uction"])
      expect(harnessLabelNameSchema.safeParse(name).success, name).toBe(false);
  });
});

describe("a label's canary", () => {
  const ids = fc.string({ minLength: 1, maxLength: 40 });

  it("puts a conversation in the same arm on every call while the split is unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(ids, ids, fc.integer({ min: 0, max: 100 }), async (tenant, conversation, percent) => {
        const first = pickCanaryArm(await readCanaryBucket(tenant, conversation), percent);
        const again = pickCanaryArm(await readCanaryBucket(tenant, conversation), percent);
        expect(again).toBe(first);
      }),
      { ...PROPERTY_LIMITS, numRuns: 200 },
    );
  });

  it("only moves conversations onto the canary as its percent grows; 0 % takes none and 100 % all", async () => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        ids,
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        async (tenant, conversation, p, q) => {
          const bucket = await readCanaryBucket(tenant, conversation);
          const [low, high] = p <= q ? [p, q] : [q, p];
          if (pickCanaryArm(bucket, low) === "canary") expect(pickCanaryArm(bucket, high)).toBe("canary");
          expect(pickCanaryArm(bucket, 0)).toBe("production");
          expect(pickCanaryArm(bucket, 100)).toBe("canary");
        },
      ),
      { ...PROPERTY_LIMITS, numRuns: 200 },
    );
  });

  it("takes about its percent of conversations, and depends on the tenant too", async () => {
    const buckets = await Promise.all(
      Array.from({ length: 4000 }, (_, i) => readCanaryBucket("ten_a", `conv_${i}`)),
    );
    const share = buckets.filter((bucket) => pickCanaryArm(bucket, 50) === "canary").length / buckets.length;
    expect(share).toBeGreaterThan(0.46);
    expect(share).toBeLessThan(0.54);
    const tenTenth = buckets.filter((bucket) => pickCanaryArm(bucket, 10) === "canary").length;
    expect(tenTenth / buckets.length).toBeGreaterThan(0.08);
    expect(tenTenth / buckets.length).toBeLessThan(0.12);
    const otherTenant = await Promise.all(
      Array.from({ length: 200 }, (_, i) => readCanaryBucket("ten_b", `conv_${i}`)),
    );
    expect(otherTenant).not.toEqual(buckets.slice(0, 200));
  });
});
