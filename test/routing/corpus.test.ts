import { describe, expect, it } from "vitest";
import {
  ROUTE_LABELS,
  SPLITS,
  findNearDuplicates,
  loadCorpus,
  parseCorpusText,
  summariseCorpus,
  type CorpusRecord,
} from "../../gpu-nodes/training/router/check-corpus.ts";

const { records, problems } = loadCorpus();
const summary = summariseCorpus(records);

describe("routing corpus (issue 13)", () => {
  it("has only valid lines and unique ids", () => {
    expect(problems).toEqual([]);
  });

  // Needs both halves of the corpus (a-*.jsonl single-turn English, b-*.jsonl multi-turn and non-English).
  it("holds at least 3,000 examples", () => {
    expect(summary.total).toBeGreaterThanOrEqual(3000);
  });

  it("gives at least 25 % of examples earlier turns and at least 10 % a language other than English", () => {
    expect(summary.withContext / summary.total).toBeGreaterThanOrEqual(0.25);
    expect(summary.nonEnglish / summary.total).toBeGreaterThanOrEqual(0.1);
  });

  it("gives every label at least 15 % of the examples and a place in every split", () => {
    for (const label of ROUTE_LABELS) {
      expect(summary.byLabel[label] ?? 0, label).toBeGreaterThanOrEqual(0.15 * summary.total);
      for (const split of SPLITS)
        expect(summary.labelBySplit[label]?.[split] ?? 0, `${label}/${split}`).toBeGreaterThan(0);
    }
  });

  it("has no near-duplicate examples across train, dev and test", () => {
    const leaks = findNearDuplicates(records)
      .filter((d) => d.crossSplit)
      .map((d) => `${d.a.id} (${d.a.split}) ~ ${d.b.id} (${d.b.split}): ${d.a.message}`);
    expect(leaks).toEqual([]);
  });
});

describe("corpus checker", () => {
  const record = (
    id: string,
    message: string,
    split: CorpusRecord["split"],
    context?: string[],
  ): CorpusRecord => ({
    id,
    message,
    label: "coding",
    split,
    lang: "en",
    tags: [],
    ...(context ? { context: context.map((m) => ({ message: m, label: "coding" as const })) } : {}),
  });

  it("finds a reworded copy in another split and an exact copy under different punctuation", () => {
    const pairs = findNearDuplicates([
      record("a-1", "Why does my Python script throw a KeyError when reading the config file?", "train"),
      record("a-2", "why does my python script throw a KeyError when reading the config file", "test"),
      record(
        "a-3",
        "Why does my Python script throw a KeyError when reading the config file at startup?",
        "dev",
      ),
      record("a-4", "Book a table for two at an Italian place near the office on Friday", "train"),
    ]);
    const found = pairs.map((d) => [d.a.id, d.b.id, d.crossSplit]);
    expect(found).toContainEqual(["a-1", "a-2", true]);
    expect(found).toContainEqual(["a-1", "a-3", true]);
    expect(found.some((ids) => ids.includes("a-4"))).toBe(false);
  });

  it("tells the same follow-up after different earlier turns apart, and catches short exact repeats", () => {
    const pairs = findNearDuplicates([
      record("a-1", "now add tests", "train", ["write a function that parses ISO dates in TypeScript"]),
      record("a-2", "now add tests", "test", ["write a bash script that rotates nginx logs nightly"]),
      record("a-3", "Thanks!", "train"),
      record("a-4", "thanks", "dev"),
    ]);
    expect(pairs.map((d) => [d.a.id, d.b.id])).toEqual([["a-3", "a-4"]]);
  });

  it("reports a bad label, a missing split and broken JSON with their line numbers", () => {
    const text = [
      '{"id":"a-00001","message":"hi","label":"chat","split":"train","lang":"en","tags":[]}',
      '{"id":"a-00002","message":"hi there","label":"search","split":"train","lang":"en"}',
      '{"id":"a-00003","message":"ok","label":"chat","lang":"en"}',
      '{"id":"a-00004",',
    ].join("\n");
    const { records: parsed, problems: found } = parseCorpusText(text, "x.jsonl");
    expect(parsed.map((r) => r.id)).toEqual(["a-00001"]);
    expect(found.map((p) => p.line)).toEqual([2, 3, 4]);
  });
});
