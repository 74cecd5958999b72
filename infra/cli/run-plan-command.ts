import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, extname, relative } from "node:path";
import { measureModelFile } from "../../gpu-nodes/tools/planner/measure-model-file.ts";
import {
  describeSpecIssues,
  planSpecSchema,
  type PlanSpec,
  planFromSpec,
} from "../../gpu-nodes/tools/planner/plan-spec.ts";
import {
  type StoragePlan,
  estimateKvCacheBytes,
  planStorage,
  type StoragePlanInput,
} from "../../gpu-nodes/tools/planner/plan-storage.ts";
import {
  planTestModelPaths,
  resolveTestModelDefaults,
  TINY_BASE_FILE_NAME,
} from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import type { TextSink } from "./cli-io.ts";
import { UsageError, type PlanCommand } from "./parse-cli-args.ts";

/** A spec file that is missing, not JSON or not a spec is the caller's mistake: a UsageError (exit 2). */
export async function readPlanSpec(path: string): Promise<PlanSpec> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read spec ${path}${code === "ENOENT" ? ": no such file" : `: ${code}`}`,
      "plan",
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error: unknown) {
    throw new UsageError(`spec ${path} is not JSON: ${(error as Error).message}`, "plan");
  }
  const parsed = planSpecSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`bad spec ${path}: ${describeSpecIssues(parsed.error)}`, "plan");
  return parsed.data;
}

const COUNT_UNITS: readonly [number, string][] = [
  [1e12, "T"],
  [1e9, "B"],
  [1e6, "M"],
  [1e3, "K"],
];
const BYTE_UNITS: readonly [number, string][] = [
  [2 ** 40, " TiB"],
  [2 ** 30, " GiB"],
  [2 ** 20, " MiB"],
  [2 ** 10, " KiB"],
];

/**
 * Four significant digits with trailing zeros dropped (774.8B, 2.976T, 744B): enough to tell layouts
 * apart, short enough to read. The unit is chosen after rounding, so 999.96B prints as 1T.
 */
function formatScaled(value: number, units: readonly [number, string][], bare: string): string {
  const magnitude = Math.abs(value);
  for (const [scale, unit] of units) {
    const rounded = Number((magnitude / scale).toPrecision(4));
    if (rounded >= 1) return `${value < 0 ? "-" : ""}${rounded}${unit}`;
  }
  return `${Number(value.toPrecision(4))}${bare}`;
}

/** Parameters in decimal units: K, M, B (1e9), T (1e12). */
export function formatParameterCount(parameters: number): string {
  return formatScaled(parameters, COUNT_UNITS, "");
}

/** Bytes in binary units, as GPU memory is sized. */
export function formatByteSize(bytes: number): string {
  return formatScaled(bytes, BYTE_UNITS, " B");
}

/** A fraction as a percentage with one decimal: 0.73965 → "74.0 %". */
export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}

export interface PlanReport {
  /** Where the figures came from, for the first line: a spec path or the files read. */
  source: string;
  plan: StoragePlan;
  /** Set for specs: bytes were derived from parameters, so say at what width. */
  dtype?: { name: string; bytesPerParameter: number };
  kvCache?: { slots: number; context: number; bytesPerSlot: number };
}

const LABEL_WIDTH = 19;

function row(label: string, value: string, note: string, valueWidth: number): string {
  return `  ${label.padEnd(LABEL_WIDTH)}${value.padEnd(valueWidth)}  ${note}`;
}

function describeDtype(dtype: PlanReport["dtype"]): string {
  if (dtype === undefined) return "header tensor sizes as stored";
  const width = `${dtype.bytesPerParameter} byte${dtype.bytesPerParameter === 1 ? "" : "s"} per parameter`;
  return `spec; ${dtype.name === "custom" ? width : `${dtype.name}, ${width}`}`;
}

/** The plan for a person: stored parameters of both layouts, the reduction, then memory per node. */
export function formatStoragePlan(report: PlanReport): string {
  const { plan } = report;
  const count = formatParameterCount;
  const lines = [`molmesh plan: ${report.source} (${describeDtype(report.dtype)})`, ""];
  if (plan.adapters.length > 1) {
    lines.push("Adapters");
    for (const adapter of plan.adapters) {
      lines.push(row(adapter.name, count(adapter.parameters), formatByteSize(adapter.bytes), 8));
    }
    lines.push("");
  }
  const specialists = `${plan.specialists} specialist${plan.specialists === 1 ? "" : "s"}`;
  lines.push(
    "Stored parameters",
    row(
      "MoL layout",
      count(plan.mol.parameters),
      `one base ${count(plan.base.parameters)} + adapters ${count(plan.adapterTotal.parameters)}`,
      8,
    ),
    row(
      "Replicated layout",
      count(plan.replicated.parameters),
      `one base per specialist: ${plan.specialists} × ${count(plan.base.parameters)}, adapters merged`,
      8,
    ),
    row(
      "Reduction",
      formatPercent(plan.reduction),
      "of the replicated layout's parameters not stored by MoL",
      8,
    ),
    "",
  );
  const kv = report.kvCache;
  const kvNote =
    kv === undefined || kv.slots === 0
      ? ", no KV cache"
      : `, KV cache ${kv.slots} slot${kv.slots === 1 ? "" : "s"} × ${kv.context} tokens = ${formatByteSize(plan.node.kvCacheBytes)}`;
  lines.push(
    `Memory per GPU node (weights${kvNote})`,
    row(
      "MoL node",
      formatByteSize(plan.node.mol),
      `base once + every adapter; serves all ${specialists}`,
      10,
    ),
    row(
      "Replicated node",
      formatByteSize(plan.node.replicatedPerNode),
      `one merged copy; serves 1 specialist (${plan.specialists} nodes: ${formatByteSize(plan.node.replicatedAllNodes)})`,
      10,
    ),
  );
  return `${lines.join("\n")}\n`;
}

/** The tiny model's entry router; every other generated adapter is a specialist. */
const ROUTER_LABEL = "l0";

interface ModelFiles {
  source: string;
  base: string;
  adapters: readonly string[];
  specialists: number;
}

async function reportFromSpec(command: PlanCommand & { spec: string }): Promise<PlanReport> {
  const spec = await readPlanSpec(command.spec);
  if (spec.kv_cache === undefined && (command.slots !== undefined || command.context !== undefined)) {
    throw new UsageError(
      "--slots and --context need a kv_cache {layers, kv_heads, head_dim, context} in the spec",
      "plan",
    );
  }
  const kvCache =
    spec.kv_cache === undefined
      ? undefined
      : {
          ...spec.kv_cache,
          slots: command.slots ?? spec.kv_cache.slots,
          context: command.context ?? spec.kv_cache.context,
        };
  const input = planFromSpec({
    ...spec,
    kv_cache: kvCache,
    specialists: command.specialists ?? spec.specialists,
  });
  return buildReport(command.spec, input, { name: input.dtype, bytesPerParameter: input.bytesPerParameter });
}

function buildReport(source: string, input: StoragePlanInput, dtype?: PlanReport["dtype"]): PlanReport {
  const report: PlanReport = { source, plan: planStorage(input) };
  if (dtype !== undefined) report.dtype = dtype;
  if (input.kvCache !== undefined) report.kvCache = input.kvCache;
  return report;
}

function locateModelFiles(command: PlanCommand): ModelFiles {
  if (command.base !== undefined) {
    for (const path of [command.base, ...command.adapters]) {
      if (!existsSync(path)) throw new UsageError(`no such model file: ${path}`, "plan");
    }
    const source = `${basename(command.base)} + ${command.adapters.length} adapter file(s)`;
    const specialists = command.specialists ?? command.adapters.length;
    return { source, base: command.base, adapters: command.adapters, specialists };
  }
  const { outDir } = resolveTestModelDefaults();
  const paths = planTestModelPaths(outDir, undefined);
  const missing = [paths.base, ...Object.values(paths.adapters)].find((path) => !existsSync(path));
  if (missing !== undefined) {
    throw new Error(`the tiny model is not generated yet (${missing} is missing): run \`npm run models\``);
  }
  const labels = Object.keys(paths.adapters);
  return {
    source: `tiny model in ${relative(process.cwd(), outDir) || "."}: ${TINY_BASE_FILE_NAME} + ${labels.length} LoRAs`,
    base: paths.base,
    adapters: Object.values(paths.adapters),
    specialists: command.specialists ?? labels.filter((label) => label !== ROUTER_LABEL).length,
  };
}

async function reportFromFiles(command: PlanCommand): Promise<PlanReport> {
  const files = locateModelFiles(command);
  const base = await measureModelFile(files.base);
  const adapters = await Promise.all(
    files.adapters.map(async (path) => {
      const { parameters, bytes } = await measureModelFile(path);
      return { name: basename(path, extname(path)), parameters, bytes };
    }),
  );
  const input: StoragePlanInput = {
    base: { parameters: base.parameters, bytes: base.bytes },
    adapters,
    specialists: files.specialists,
  };
  const shape = base.kvCache;
  if (shape === undefined && (command.slots !== undefined || command.context !== undefined)) {
    throw new UsageError(
      "--slots and --context need the attention shape, which this base's header lacks (safetensors never has it)",
      "plan",
    );
  }
  const slots = command.slots ?? 1;
  if (shape !== undefined && slots > 0) {
    const context = command.context ?? shape.context;
    input.kvCache = { bytesPerSlot: estimateKvCacheBytes(shape, context), slots, context };
  }
  return buildReport(files.source, input);
}

/** `molmesh plan`: needs no mesh, only a spec or model files, and reads headers, never tensor data. */
export async function runPlanCommand(command: PlanCommand, io: { stdout: TextSink }): Promise<number> {
  const report =
    command.spec === undefined
      ? await reportFromFiles(command)
      : await reportFromSpec({ ...command, spec: command.spec });
  io.stdout.write(command.json ? `${JSON.stringify(report, null, 2)}\n` : formatStoragePlan(report));
  return 0;
}
