import { z } from "zod";
import { ROUTER_ADAPTER, SPECIALIST_LABELS, adapterIdSchema } from "./adapter-id.ts";
import { hopRequestBaseSchema } from "./hop-request-base.ts";

/** Token budget of the whole route output (reasoning prefix + label). */
export const DEFAULT_ROUTE_MAX_TOKENS = 24;
export const MAX_ROUTE_MAX_TOKENS = 256;
/** Templates are short; this bounds what a node evaluates unasked. */
const MAX_AFTER_LABEL_CHARS = 256;

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
    /**
     * What the conversation's next router view holds right after this hop's label: the route line's end and the
     * next user line's opening, in the view's own text (sentinels marking special tokens). A node keeping KV
     * slots evaluates label + this once it has replied, so the next route hop prefills only the new message.
     * Absent: it does not. Ignored with reasoning, whose text the next view does not hold.
     */
    afterLabel: z.string().max(MAX_AFTER_LABEL_CHARS).optional(),
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
