import { z } from "zod";
import { adapterIdSchema } from "./adapter-id.ts";
import { wireVersionSchema } from "./version.ts";

/** Most (conversation, adapter) pairs a heartbeat lists per adapter; past it the node lists its newest. */
export const MAX_WARM_KEYS_PER_ADAPTER = 256;

export const adapterStatusSchema = z.object({
  id: adapterIdSchema,
  /** Content fingerprint of the LoRA file, or of the base when the adapter runs on the bare base. */
  revision: z.string(),
  lora: z.boolean(),
  totalSlots: z.int().nonnegative(),
  freeSlots: z.int().nonnegative(),
  /** Conversations whose KV for this adapter is resident, most recently used first. */
  warmConversations: z.array(z.string()).max(MAX_WARM_KEYS_PER_ADAPTER),
});
export type AdapterStatus = z.infer<typeof adapterStatusSchema>;

/** The heartbeat each node writes to the JetStream KV bucket; the bucket's TTL removes silent nodes. */
export const nodeStatusSchema = z.object({
  version: wireVersionSchema,
  nodeId: z.string(),
  engine: z.string(),
  baseModel: z.object({ name: z.string(), revision: z.string() }),
  adapters: z.array(adapterStatusSchema),
  inFlight: z.int().nonnegative(),
  maxConcurrent: z.int().positive(),
  /** Requests admitted but waiting for their (conversation, adapter) slot. */
  queueDepth: z.int().nonnegative(),
  startedAt: z.int().nonnegative(),
  /** Node clock, unix ms; informative only: liveness comes from the bucket's TTL. */
  updatedAt: z.int().nonnegative(),
  heartbeatIntervalMs: z.int().positive(),
  /** Configured adapters that failed to load (the node serves no hop for them); absent when none did. */
  failedAdapters: z.array(z.object({ id: adapterIdSchema, reason: z.string().max(2000) })).optional(),
});
export type NodeStatus = z.infer<typeof nodeStatusSchema>;
