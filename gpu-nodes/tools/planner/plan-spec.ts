import { z } from "zod";
import {
  countLoraParameters,
  estimateKvCacheBytes,
  type KvCacheBudget,
  type NamedWeights,
  type StoragePlanInput,
} from "./plan-storage.ts";

/** Bytes per parameter of the dtypes a spec may name; int4 packs two parameters per byte. */
export const DTYPE_BYTES = { f32: 4, bf16: 2, f16: 2, fp8: 1, int8: 1, int4: 0.5 } as const;
export type PlanDtype = keyof typeof DTYPE_BYTES;
export const DEFAULT_PLAN_DTYPE: PlanDtype = "bf16";

const count = z.number().int().positive();

const loraModuleSchema = z.strictObject({ in: count, out: count });

const adapterShapeSchema = z.strictObject({
  rank: count,
  layers: count,
  target_modules: z
    .record(z.string(), loraModuleSchema)
    .refine((modules) => Object.keys(modules).length > 0, "needs at least one module"),
});

const kvCacheSchema = z.strictObject({
  layers: count,
  kv_heads: count,
  head_dim: count,
  context: count,
  slots: z.number().int().nonnegative().default(1),
  bytes_per_value: z.number().positive().default(2),
});

/**
 * A model described by its published figures instead of its files. The adapters are given either as one
 * total (`adapter_params_total`) or by shape (`adapter`: rank, layers, target modules with their in/out
 * features); by shape, the entry router l0 counts as one more adapter of that shape unless
 * `router_adapter` is false.
 */
export const planSpecSchema = z
  .strictObject({
    /** Free text: where the figures come from. */
    source: z.string().optional(),
    base_params: count,
    specialists: count,
    adapter_params_total: z.number().int().nonnegative().optional(),
    adapter: adapterShapeSchema.optional(),
    router_adapter: z.boolean().default(true),
    dtype: z.enum(Object.keys(DTYPE_BYTES) as [PlanDtype, ...PlanDtype[]]).optional(),
    bytes_per_param: z.number().positive().optional(),
    kv_cache: kvCacheSchema.optional(),
  })
  .superRefine((spec, context) => {
    if ((spec.adapter_params_total === undefined) === (spec.adapter === undefined)) {
      context.addIssue({
        code: "custom",
        message: "give exactly one of adapter_params_total or adapter {rank, layers, target_modules}",
        path: ["adapter_params_total"],
      });
    }
    if (spec.dtype !== undefined && spec.bytes_per_param !== undefined) {
      context.addIssue({
        code: "custom",
        message: "give dtype or bytes_per_param, not both",
        path: ["bytes_per_param"],
      });
    }
  });

export type PlanSpec = z.infer<typeof planSpecSchema>;

/** One line per problem, each naming the field, so a typo in a spec is found without reading a schema. */
export function describeSpecIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length === 0 ? "(spec)" : issue.path.join(".")}: ${issue.message}`)
    .join("; ");
}

export interface SpecPlanInput extends StoragePlanInput {
  /** `bf16`, or `custom` when the spec gave bytes_per_param. */
  dtype: string;
  bytesPerParameter: number;
}

function listSpecAdapters(spec: PlanSpec, bytesPerParameter: number): NamedWeights[] {
  const weigh = (name: string, parameters: number): NamedWeights => ({
    name,
    parameters,
    bytes: parameters * bytesPerParameter,
  });
  if (spec.adapter === undefined) return [weigh("adapters (total)", spec.adapter_params_total ?? 0)];
  const perAdapter = countLoraParameters({
    rank: spec.adapter.rank,
    layers: spec.adapter.layers,
    modules: spec.adapter.target_modules,
  });
  const names = Array.from({ length: spec.specialists }, (_, index) => `specialist ${index + 1}`);
  if (spec.router_adapter) names.unshift("router l0");
  return names.map((name) => weigh(name, perAdapter));
}

function budgetKvCache(spec: PlanSpec): KvCacheBudget | undefined {
  const kv = spec.kv_cache;
  if (kv === undefined) return undefined;
  const shape = {
    layers: kv.layers,
    kvHeads: kv.kv_heads,
    keyLength: kv.head_dim,
    valueLength: kv.head_dim,
    context: kv.context,
  };
  return {
    bytesPerSlot: estimateKvCacheBytes(shape, kv.context, kv.bytes_per_value),
    slots: kv.slots,
    context: kv.context,
  };
}

/** A validated spec as planner input; bytes are parameters × the spec's bytes per parameter. */
export function planFromSpec(spec: PlanSpec): SpecPlanInput {
  const dtype = spec.bytes_per_param === undefined ? (spec.dtype ?? DEFAULT_PLAN_DTYPE) : "custom";
  const bytesPerParameter = spec.bytes_per_param ?? DTYPE_BYTES[spec.dtype ?? DEFAULT_PLAN_DTYPE];
  const input: SpecPlanInput = {
    dtype,
    bytesPerParameter,
    base: { parameters: spec.base_params, bytes: spec.base_params * bytesPerParameter },
    adapters: listSpecAdapters(spec, bytesPerParameter),
    specialists: spec.specialists,
  };
  const kvCache = budgetKvCache(spec);
  if (kvCache !== undefined) input.kvCache = kvCache;
  return input;
}
