import { z } from "zod";
import { ROUTER_ADAPTER, SPECIALIST_LABELS, adapterIdSchema } from "./adapter-id.ts";
import { hopRequestBaseSchema } from "./hop-request-base.ts";

/** Token budget of the whole route output (reasoning prefix + label). */
export const DEFAULT_ROUTE_MAX_TOKENS = 24;
export const MAX_ROUTE_MAX_TOKENS = 256;

export const routeRequestSchema = hopRequestBaseSchema
  .extend({
    type: z.literal("route"),
    adapter: adapterIdSchema.default(ROUTER_ADAPTER),
    labels: z
      .array(adapterIdSchema)
      .min(1)
      .max(32)
      .default([...SPECIALIST_LABELS])
      .refine((labels) => new Set(labels).size === labels.length, "labels must be unique"),
    maxTokens: z.int().min(1).max(MAX_ROUTE_MAX_TOKENS).default(DEFAULT_ROUTE_MAX_TOKENS),
    /**
     * Optional short free-text reasoning before the label. The node bounds it so reasoning + label always
     * fit `maxTokens`; 0 (the default) decodes the label alone.
     */
    reasoningMaxTokens: z.int().min(0).max(MAX_ROUTE_MAX_TOKENS).default(0),
  })
  .refine(
    (r) => r.reasoningMaxTokens + Math.max(...r.labels.map(labelByteLength)) <= r.maxTokens,
    "maxTokens must cover reasoningMaxTokens plus the longest label's bytes (one token per byte at worst)",
  );
export type RouteRequest = z.infer<typeof routeRequestSchema>;
export type RouteRequestInput = z.input<typeof routeRequestSchema>;

/** A label can never take more tokens than bytes: every non-control token covers at least one byte. */
export function labelByteLength(label: string): number {
  return new TextEncoder().encode(label).length;
}
