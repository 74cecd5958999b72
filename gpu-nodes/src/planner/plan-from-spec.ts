import { countLoraParameters } from "./count-lora-parameters.ts";
import { estimateKvCacheBytes } from "./estimate-kv-cache-bytes.ts";
import { DEFAULT_PLAN_DTYPE, DTYPE_BYTES, type PlanSpec } from "./plan-spec-schema.ts";
import type { KvCacheBudget, NamedWeights, StoragePlanInput } from "./plan-storage.ts";

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
