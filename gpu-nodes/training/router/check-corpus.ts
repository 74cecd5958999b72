/**
 * The routing corpus's one gate: every line valid, ids unique, counts printed, and no near-duplicate
 * examples across train/dev/test (a leaked near-copy makes the dev and test scores lie).
 * Usage: tsx gpu-nodes/training/router/check-corpus.ts [corpusDir] [--markdown | --update-readme]
 * --markdown prints only the count tables; --update-readme writes them into corpus/README.md between its markers.
 * Exits 1 on an invalid line, a repeated id, or a near-duplicate pair across splits.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";

export const ROUTE_LABELS = ["chat", "coding", "agent", "genui"] as const;
export const SPLITS = ["train", "dev", "test"] as const;
export const DEFAULT_CORPUS_DIR = fileURLToPath(new URL("./corpus/", import.meta.url));

const routeLabel = z.enum(ROUTE_LABELS);
const message = z.string().trim().min(1).max(8000);

export const contextTurnSchema = z.strictObject({ message, label: routeLabel });

export const corpusRecordSchema = z.strictObject({
  id: z.string().regex(/^[a-z]+(-[a-z0-9]+)+$/, "id looks like a-00001"),
  context: z.array(contextTurnSchema).min(1).optional(),
  message,
  label: routeLabel,
  split: z.enum(SPLITS),
  lang: z.string().regex(/^[a-z]{2}$/, "lang is an ISO 639-1 code such as en, de, ja"),
  tags: z.array(z.string().regex(/^[a-z0-9][a-z0-9:_-]*$/)).default([]),
});

export type CorpusRecord = z.infer<typeof corpusRecordSchema>;
export type CorpusProblem = { file: string; line: number; reason: string };

/** Parses one JSONL shard; a bad line becomes a problem, never a thrown error, so one run lists them all. */
export function parseCorpusText(
  text: string,
  file: string,
): { records: CorpusRecord[]; problems: CorpusProblem[] } {
  const records: CorpusRecord[] = [];
  const problems: CorpusProblem[] = [];
  text.split("\n").forEach((raw, index) => {
    if (raw.trim() === "") return;
    const line = index + 1;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      problems.push({ file, line, reason: `not JSON: ${(error as Error).message}` });
      return;
    }
    const parsed = corpusRecordSchema.safeParse(json);
    if (parsed.success) records.push(parsed.data);
    else problems.push({ file, line, reason: z.prettifyError(parsed.error).replaceAll("\n", " ") });
  });
  return { records, problems };
}

export function loadCorpus(dir: string = DEFAULT_CORPUS_DIR): {
  records: CorpusRecord[];
  problems: CorpusProblem[];
} {
  const records: CorpusRecord[] = [];
  const problems: CorpusProblem[] = [];
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort();
  for (const name of files) {
    const shard = parseCorpusText(readFileSync(join(dir, name), "utf8"), name);
    records.push(...shard.records);
    problems.push(...shard.problems);
  }
  const seen = new Set<string>();
  for (const record of records) {
    if (seen.has(record.id)) problems.push({ file: "(corpus)", line: 0, reason: `repeated id ${record.id}` });
    seen.add(record.id);
  }
  return { records, problems };
}

/** Lowercase, letters only (any script), one space between words: "Fix THIS bug!!" and "fix this bug" match. */
export function normaliseText(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKC")
    .replace(/[^\p{L}\s]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

// Scripts written without spaces would otherwise be one giant "word"; their character bigrams stand in for words.
const unspacedScript = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;

export function tokenSet(normalised: string): Set<string> {
  const tokens = new Set<string>();
  for (const word of normalised.split(" ")) {
    if (word === "") continue;
    if (!unspacedScript.test(word) || word.length < 3) {
      tokens.add(word);
      continue;
    }
    for (let i = 0; i + 1 < word.length; i++) tokens.add(word.slice(i, i + 2));
  }
  return tokens;
}

/** What an example says, earlier turns included: the same follow-up after different turns is a different example. */
function exampleText(record: CorpusRecord): string {
  return [...(record.context ?? []).map((turn) => turn.message), record.message].join(" \n ");
}

export type NearDuplicate = { a: CorpusRecord; b: CorpusRecord; similarity: number; crossSplit: boolean };
export type NearDuplicateOptions = { threshold?: number; minTokens?: number };

/**
 * Exact matches after normalising, plus word-set Jaccard ≥ threshold for examples of at least minTokens tokens
 * (shorter ones differ by a word and are still different examples). Candidates come from prefix filtering: two
 * sets with Jaccard ≥ t must share one of the rarest |A| − ⌈t·|A|⌉ + 1 tokens of each, so only those are indexed.
 */
export function findNearDuplicates(
  records: readonly CorpusRecord[],
  options: NearDuplicateOptions = {},
): NearDuplicate[] {
  const threshold = options.threshold ?? 0.8;
  const minTokens = options.minTokens ?? 4;
  const pairs: NearDuplicate[] = [];
  const pair = (a: CorpusRecord, b: CorpusRecord, similarity: number) =>
    pairs.push({ a, b, similarity, crossSplit: a.split !== b.split });

  const examples = records.map((record) => {
    const text = normaliseText(exampleText(record));
    return { record, text, tokens: tokenSet(text) };
  });
  const byText = new Map<string, CorpusRecord[]>();
  for (const { record, text } of examples) byText.set(text, [...(byText.get(text) ?? []), record]);
  for (const same of byText.values()) {
    same.forEach((a, i) => same.slice(i + 1).forEach((b) => pair(a, b, 1)));
  }

  const documentFrequency = new Map<string, number>();
  for (const { tokens } of examples) {
    for (const token of tokens) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
  }
  const rarity = (token: string) => documentFrequency.get(token) ?? 0;
  const rarestFirst = (x: string, y: string) => rarity(x) - rarity(y) || (x < y ? -1 : x > y ? 1 : 0);

  const index = new Map<string, typeof examples>();
  for (const example of examples) {
    const size = example.tokens.size;
    if (size < minTokens) continue;
    const prefix = [...example.tokens].sort(rarestFirst).slice(0, size - Math.ceil(threshold * size) + 1);
    const candidates = new Set(prefix.flatMap((token) => index.get(token) ?? []));
    for (const earlier of candidates) {
      if (earlier.text === example.text) continue; // already reported as an exact match
      const similarity = jaccard(example.tokens, earlier.tokens);
      if (similarity >= threshold) pair(earlier.record, example.record, similarity);
    }
    for (const token of prefix) index.set(token, [...(index.get(token) ?? []), example]);
  }
  return pairs;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const token of a) if (b.has(token)) shared++;
  return shared / (a.size + b.size - shared);
}

export type CorpusSummary = {
  total: number;
  withContext: number;
  nonEnglish: number;
  byLabel: Record<string, number>;
  bySplit: Record<string, number>;
  byLang: Record<string, number>;
  byTag: Record<string, number>;
  labelBySplit: Record<string, Record<string, number>>;
};

export function summariseCorpus(records: readonly CorpusRecord[]): CorpusSummary {
  const count = (table: Record<string, number>, key: string) => (table[key] = (table[key] ?? 0) + 1);
  const summary: CorpusSummary = {
    total: records.length,
    withContext: 0,
    nonEnglish: 0,
    byLabel: {},
    bySplit: {},
    byLang: {},
    byTag: {},
    labelBySplit: Object.fromEntries(ROUTE_LABELS.map((label) => [label, {}])),
  };
  for (const record of records) {
    if (record.context) summary.withContext++;
    if (record.lang !== "en") summary.nonEnglish++;
    count(summary.byLabel, record.label);
    count(summary.bySplit, record.split);
    count(summary.byLang, record.lang);
    count((summary.labelBySplit[record.label] ??= {}), record.split);
    for (const tag of record.tags) count(summary.byTag, tag);
  }
  return summary;
}

const share = (part: number, whole: number) => `${whole === 0 ? 0 : ((100 * part) / whole).toFixed(1)} %`;
const sortedEntries = (table: Record<string, number>) => Object.entries(table).sort((x, y) => y[1] - x[1]);

/** Markdown tables, so the corpus README's numbers are this function's output and not hand-typed. */
export function formatSummary(summary: CorpusSummary): string {
  const lines = [
    `${summary.total} examples; ${summary.withContext} with earlier turns (${share(summary.withContext, summary.total)}); ` +
      `${summary.nonEnglish} not in English (${share(summary.nonEnglish, summary.total)}).`,
    "",
    `| label | ${SPLITS.join(" | ")} | total | share |`,
    `| --- | ${SPLITS.map(() => "---:").join(" | ")} | ---: | ---: |`,
  ];
  for (const label of ROUTE_LABELS) {
    const row = summary.labelBySplit[label] ?? {};
    const total = summary.byLabel[label] ?? 0;
    lines.push(
      `| ${label} | ${SPLITS.map((s) => row[s] ?? 0).join(" | ")} | ${total} | ${share(total, summary.total)} |`,
    );
  }
  lines.push(
    `| all | ${SPLITS.map((s) => summary.bySplit[s] ?? 0).join(" | ")} | ${summary.total} | 100 % |`,
    "",
    "| lang | examples |",
    "| --- | ---: |",
    ...sortedEntries(summary.byLang).map(([lang, n]) => `| ${lang} | ${n} |`),
    "",
    "| tag | examples |",
    "| --- | ---: |",
    ...sortedEntries(summary.byTag).map(([tag, n]) => `| ${tag} | ${n} |`),
  );
  return lines.join("\n");
}

const COUNTS_START =
  "<!-- counts:start (npx tsx gpu-nodes/training/router/check-corpus.ts --update-readme) -->";
const COUNTS_END = "<!-- counts:end -->";

/** Rewritten through prettier, so the README stays as `npm run format:check` wants it. */
async function updateReadme(dir: string, tables: string): Promise<void> {
  const prettier = await import("prettier");
  const path = join(dir, "README.md");
  const readme = readFileSync(path, "utf8");
  const start = readme.indexOf(COUNTS_START);
  const end = readme.indexOf(COUNTS_END);
  if (start < 0 || end < start) throw new Error(`${path} lacks the counts markers`);
  const updated = `${readme.slice(0, start + COUNTS_START.length)}\n\n${tables}\n\n${readme.slice(end)}`;
  const options = (await prettier.resolveConfig(path)) ?? {};
  writeFileSync(path, await prettier.format(updated, { ...options, filepath: path }));
}

async function main(argv: readonly string[]): Promise<number> {
  const dir = resolve(argv.find((arg) => !arg.startsWith("--")) ?? DEFAULT_CORPUS_DIR);
  const startedAt = performance.now();
  const { records, problems } = loadCorpus(dir);
  const duplicates = findNearDuplicates(records);
  const crossSplit = duplicates.filter((d) => d.crossSplit);
  const elapsedMs = Math.round(performance.now() - startedAt);

  const tables = formatSummary(summariseCorpus(records));
  if (argv.includes("--update-readme")) await updateReadme(dir, tables);
  console.log(tables);
  if (argv.includes("--markdown")) return 0;
  console.log("");
  for (const p of problems) console.log(`INVALID ${p.file}:${p.line} ${p.reason}`);
  for (const d of duplicates) {
    const where = d.crossSplit ? `ACROSS SPLITS ${d.a.split}/${d.b.split}` : `same split ${d.a.split}`;
    console.log(`near-duplicate (${d.similarity.toFixed(2)}, ${where}) ${d.a.id} ~ ${d.b.id}`);
    console.log(
      `    ${JSON.stringify(d.a.message).slice(0, 100)}\n    ${JSON.stringify(d.b.message).slice(0, 100)}`,
    );
  }
  console.log(
    `${records.length} valid, ${problems.length} invalid, ${duplicates.length} near-duplicate pairs ` +
      `(${crossSplit.length} across splits) in ${elapsedMs} ms`,
  );
  return problems.length > 0 || crossSplit.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
}
