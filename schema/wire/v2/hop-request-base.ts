import { z } from "zod";
import { adapterIdSchema } from "./adapter-id.ts";
import { wireVersionSchema } from "./version.ts";

/** Longest deadline a hop may ask for, in milliseconds. */
export const MAX_HOP_TIMEOUT_MS = 600_000;
/** Largest view (prompt) accepted on the wire, in UTF-16 code units; NATS' default max payload is 1 MiB. */
export const MAX_VIEW_CHARS = 400_000;

/**
 * Heartbeat feature of nodes that read `tenantId`. Answer requests are strict (unknown fields are refused), so the
 * edge sends the tenant only to a node that lists this feature.
 */
export const TENANT_QUEUE_FEATURE = "admission:tenant-queue";

/** Fields every hop request carries. The deadline is relative, so clocks need not agree across machines. */
export const hopRequestBaseSchema = z.object({
  version: wireVersionSchema,
  requestId: z.string().min(1).max(128),
  /** Key of the KV slot: the engine keeps one warm sequence per (conversationId, adapter). */
  conversationId: z.string().min(1).max(128),
  /** Stable across retries of the same turn on other nodes. */
  turnId: z.string().min(1).max(128).optional(),
  /**
   * Whose hop this is: the node queues hops fairly across tenants (deficit round robin). Absent (older edges, or
   * a node that does not list {@link TENANT_QUEUE_FEATURE}): the hop waits in one shared queue.
   */
  tenantId: z.string().min(1).max(128).optional(),
  adapter: adapterIdSchema,
  view: z.string().min(1).max(MAX_VIEW_CHARS),
  timeoutMs: z.int().min(1).max(MAX_HOP_TIMEOUT_MS),
});
export type HopRequestBase = z.infer<typeof hopRequestBaseSchema>;
