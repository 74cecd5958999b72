import { z } from "zod";

/** The entry adapter that routes every turn. */
export const ROUTER_ADAPTER = "l0" as const;
/** The specialists a turn can be routed to; also the route hop's default label set. */
export const SPECIALIST_LABELS = ["chat", "agent", "coding", "genui"] as const;
export type SpecialistLabel = (typeof SPECIALIST_LABELS)[number];
export const DEFAULT_ADAPTER_IDS = [ROUTER_ADAPTER, ...SPECIALIST_LABELS] as const;

/**
 * Adapter ids are NATS-token and GBNF-literal safe, so they can appear in subjects, grammars and KV keys
 * without escaping.
 */
export const adapterIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, "adapter ids are 1-32 chars of [a-z0-9_-], starting with a letter");
export type AdapterId = z.infer<typeof adapterIdSchema>;
