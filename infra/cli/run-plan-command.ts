import { existsSync } from "node:fs";
import { basename, extname, relative } from "node:path";
import {
  planTestModelPaths,
  resolveTestModelDefaults,
  TINY_BASE_FILE_NAME,
} from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import {
  estimateKvCacheBytes,
  planStorage,
  type StoragePlanInput,
} from "../../gpu-nodes/tools/planner/plan-storage.ts";
import { measureModelFile } from "../../gpu-nodes/tools/planner/measure-model-file.ts";
import { planFromSpec } from "../../gpu-nodes/tools/planner/plan-spec.ts";
import type { TextSink } from "./cli-io.ts";
import { formatStoragePlan, type PlanReport } from "./format-storage-plan.ts";
import type { PlanCommand } from "./read-plan-command.ts";
import { readPlanSpec } from "./read-plan-spec.ts";
import { UsageError } from "./usage-error.ts";

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
