import { z } from "zod";

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
