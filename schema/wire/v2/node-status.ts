import { z } from "zod";
import { adapterIdSchema } from "./adapter-id.ts";
import { adapterNameSchema, formatAdapterName } from "./adapter-name.ts";
import { anyWireVersionSchema } from "./version.ts";

/** Most (conversation, adapter) pairs a heartbeat lists per adapter; past it the node lists its newest. */
export const MAX_WARM_KEYS_PER_ADAPTER = 256;

/** One adapter revision a node holds; a node holding two revisions of a label lists each. */
export const adapterStatusSchema = z.object({
  /** The label. */
  id: adapterIdSchema,
  /** Content fingerprint of the LoRA file, or of the base when the adapter runs on the bare base. */
  revision: z.string(),
  /** The versioned name requests may ask for (`label@<rev>`); absent from older builds: derived from the revision. */
  name: adapterNameSchema.optional(),
  lora: z.boolean(),
  totalSlots: z.int().nonnegative(),
  freeSlots: z.int().nonnegative(),
  /** Conversations whose KV for this adapter is resident, most recently used first. */
  warmConversations: z.array(z.string()).max(MAX_WARM_KEYS_PER_ADAPTER),
});
export type AdapterStatus = z.infer<typeof adapterStatusSchema>;

/** The chat formats views can be rendered in (schema/harness/chat-templates.ts holds their templates). */
export const templateFamilySchema = z.enum(["plain", "chatml", "llama3", "llama2"]);
export type TemplateFamily = z.infer<typeof templateFamilySchema>;

/** What the edge renders and budgets a view for: the served model's chat format, context and tokenizer. */
export const servedModelSchema = z.object({
  templateFamily: templateFamilySchema,
  /** KV tokens per slot: every hop's prompt + completion must fit. */
  contextTokens: z.int().positive(),
  /** e.g. "gpt2/smollm" (GGUF tokenizer.ggml.model / .pre), or the HTTP engine's model name. */
  tokenizer: z.string(),
  /** Why the node fell back to the plain format, when it did. */
  warning: z.string().optional(),
});
export type ServedModel = z.infer<typeof servedModelSchema>;

/**
 * What a node may advertise beyond free text and choices: `output:<constraint type>`, `output:tools-auto` for
 * `choice: "auto"`, and `return:tokens` for token ids with logprobs in the reply.
 */
export const NODE_FEATURES = [
  "output:json_schema",
  "output:json_object",
  "output:tools",
  "output:tools-auto",
  "output:grammar",
  "return:tokens",
] as const;
export type NodeFeature = (typeof NODE_FEATURES)[number];

/**
 * What the edge needs to estimate a hop's time to first token on a node: how fast it prefills and how long a
 * hop holds it. Both are running means of what the node measured on its own hops (defaults until it served one).
 */
export const nodeLoadSchema = z.object({
  /**
   * Prompt tokens per second the node evaluates in all: each hop's own prefill rate times the hops sharing the
   * engine with it when it ran, so a busy node does not look slow to the next hop that has it to itself.
   */
  prefillTokensPerSecond: z.number().positive(),
  /** Mean time an admitted hop holds one of the node's concurrency slots, ms. */
  hopMs: z.number().nonnegative(),
});
export type NodeLoad = z.infer<typeof nodeLoadSchema>;

/** The heartbeat each node writes to the JetStream KV bucket; the bucket's TTL removes silent nodes. */
export const nodeStatusSchema = z.object({
  /** The wire version the beat was written in; nodes of every version share the bucket. */
  version: anyWireVersionSchema,
  /**
   * The wire versions the node serves requests in; absent from v1 nodes, which spoke only the beat's version. The
   * edge places requests only on nodes that speak its own.
   */
  wireVersions: z.array(anyWireVersionSchema).max(8).optional(),
  nodeId: z.string(),
  engine: z.string(),
  baseModel: z.object({ name: z.string(), revision: z.string() }),
  /** Absent from nodes of earlier builds: the edge then uses its default harness. */
  servedModel: servedModelSchema.optional(),
  adapters: z.array(adapterStatusSchema),
  inFlight: z.int().nonnegative(),
  maxConcurrent: z.int().positive(),
  /** Hops waiting: in the node's fair queue, or admitted but waiting for their (conversation, adapter) slot. */
  queueDepth: z.int().nonnegative(),
  /**
   * Absent from nodes of earlier builds and before a node's first timed prefill: the edge then assumes the best
   * figures of the nodes that report theirs, so a fresh node gets the hops it needs to measure.
   */
  load: nodeLoadSchema.optional(),
  startedAt: z.int().nonnegative(),
  /** Node clock, unix ms; informative only: liveness comes from the bucket's TTL. */
  updatedAt: z.int().nonnegative(),
  heartbeatIntervalMs: z.int().positive(),
  /** Configured adapters that failed to load (the node serves no hop for them); absent when none did. */
  failedAdapters: z.array(z.object({ id: adapterIdSchema, reason: z.string().max(2000) })).optional(),
  /**
   * What this node's engine can do beyond free text (see {@link NODE_FEATURES}); absent on nodes that predate
   * the list, which can do none of it. The edge sends a constrained answer only to a node that lists it.
   */
  features: z.array(z.string().max(64)).max(32).default([]),
});
export type NodeStatus = z.infer<typeof nodeStatusSchema>;

/** The wire versions a beat says its node speaks. */
export function readWireVersions(status: Pick<NodeStatus, "version" | "wireVersions">): readonly string[] {
  return status.wireVersions ?? [status.version];
}

/** The versioned name of an adapter entry of a beat. */
export function readAdapterName(adapter: Pick<AdapterStatus, "id" | "revision" | "name">): string {
  if (adapter.name !== undefined) return adapter.name;
  try {
    return formatAdapterName(adapter.id, adapter.revision);
  } catch {
    return adapter.id;
  }
}
