import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { formatApiKey } from "../../workers/src/api/format/format-api-key.ts";
import { timingSafeEqualText } from "../../schema/harness/content-hash.ts";
import {
  API_KEY_FORMAT,
  generateBase62,
  issueApiKey,
  parseApiKey,
  readLookupPrefix,
} from "../../workers/src/tenancy/api-key-format.ts";

const issue = () =>
  issueApiKey({ id: "key_1", tenantId: "ten_1", name: null, scopes: ["responses"], createdAt: 1 });

describe("generateBase62", () => {
  it("gives exactly the asked length from the 62-character alphabet", () => {
    for (const length of [0, 1, 12, 32, 500])
      expect(generateBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
  });

  it("is uniform: every character about equally often (a modulo bias would skew the first 8 by ~25 %)", () => {
    const counts = new Map<string, number>();
    const sample = generateBase62(62 * 2000);
    for (const char of sample) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 2000 each, σ ≈ 44: ±300 is > 6σ, while a `% 62` bias over raw bytes gives the first 8 about 2,500.
    for (const count of counts.values()) expect(Math.abs(count - 2000)).toBeLessThan(300);
  });
});

describe("issueApiKey", () => {
  it("has the documented format and at least 128 bits of randomness in the secret", async () => {
    const { key, record } = await issue();
    expect(key).toMatch(/^sk-mol-[0-9A-Za-z]{12}_[0-9A-Za-z]{32}$/);
    expect(API_KEY_FORMAT.secretLength * Math.log2(62)).toBeGreaterThanOrEqual(128);
    expect(parseApiKey(key)).toEqual({ prefix: record.prefix, secret: key.slice(-32) });
    expect(record.last4).toBe(key.slice(-4));
  });

  it("stores only the SHA-256 of the key, never the key or its secret", async () => {
    const { key, record } = await issue();
    expect(record.secretHash).toBe(createHash("sha256").update(key).digest("hex"));
    const stored = JSON.stringify(record);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(parseApiKey(key)?.secret);
  });

  it("never repeats a prefix or a key over many draws", async () => {
    const keys = await Promise.all(Array.from({ length: 2000 }, issue));
    expect(new Set(keys.map((k) => k.key)).size).toBe(2000);
    expect(new Set(keys.map((k) => k.record.prefix)).size).toBe(2000);
  });

  it("shows the key once: the stored form formats without secret or hash, with the public prefix", async () => {
    const { key, record } = await issue();
    const listed = formatApiKey(record);
    expect(listed).not.toHaveProperty("key");
    expect(JSON.stringify(listed)).not.toContain(record.secretHash);
    expect(JSON.stringify(listed)).not.toContain(parseApiKey(key)?.secret);
    expect(listed.prefix).toBe(`sk-mol-${record.prefix}`);
    expect(key.startsWith(listed.prefix ?? "missing")).toBe(true);
    expect(formatApiKey(record, key).key).toBe(key);
  });
});

describe("parseApiKey", () => {
  const valid = `sk-mol-${"A".repeat(12)}_${"b".repeat(32)}`;
  it.each([
    ["the dev key", "sk-molmesh-dev-local"],
    ["another tag", valid.replace("sk-mol-", "sk-xyz-")],
    ["a short secret", valid.slice(0, -1)],
    ["a long secret", `${valid}c`],
    ["a short prefix", `sk-mol-${"A".repeat(11)}_${"b".repeat(33)}`],
    ["a non-base62 character", valid.replace("bbb", "b-b")],
    ["surrounding space", ` ${valid}`],
    ["an empty string", ""],
  ])("refuses %s", (_name, text) => {
    expect(parseApiKey(text)).toBeUndefined();
  });

  it("reads the public prefix of a well-formed key", () => {
    expect(parseApiKey(valid)?.prefix).toBe("A".repeat(12));
  });
});

describe("readLookupPrefix", () => {
  it("uses the public prefix of issued keys and a hash prefix for anything else", async () => {
    const { key, record } = await issue();
    expect(readLookupPrefix(key, record.secretHash)).toBe(record.prefix);
    const hash = createHash("sha256").update("sk-molmesh-dev-local").digest("hex");
    expect(readLookupPrefix("sk-molmesh-dev-local", hash)).toBe(`sha256:${hash.slice(0, 16)}`);
  });
});

describe("timingSafeEqualText (the comparison used for hashes and tokens)", () => {
  it("is equal only for identical strings, whatever the length difference", () => {
    const digest = "a".repeat(64);
    expect(timingSafeEqualText(digest, digest)).toBe(true);
    expect(timingSafeEqualText(digest, `${"a".repeat(63)}b`)).toBe(false);
    expect(timingSafeEqualText(digest, digest.slice(1))).toBe(false);
    expect(timingSafeEqualText("", digest)).toBe(false);
  });
});
