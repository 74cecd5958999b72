import { z } from "zod";
import { answerTakeoverSchema, placementSchema } from "./hop-facts.ts";
import { usageSchema, wireErrorCodeSchema } from "../wire/v2/index.ts";

// The `mol` extension object: the MoL facts of one turn, on Responses, chat completions (and their chunks) and
// assistant items. The edge builds it (its type is this schema's), the CLI reads it back with the same schema.

const millis = z.number().nonnegative();

/** Why this specialist answered: the router picked it, the request forced it, or the route hop failed. */
export const molSourceSchema = z.enum(["router", "forced", "fallback"]);

/** A failed route hop: its wire code, its message (the public one once formatted for a client), who answered. */
export const molFallbackSchema = z.object({
  code: wireErrorCodeSchema,
  message: z.string(),
  to: z.enum(["previous", "default"]),
});

/** Edge-measured, ms, plus each hop's total as its GPU node measured it (the difference is transport + edge). */
export const molTimingsSchema = z.object({
  routeMs: millis.optional(),
  answerFirstTokenMs: millis.optional(),
  answerTotalMs: millis.optional(),
  summaryMs: millis.optional(),
  routeNodeMs: millis.optional(),
  answerNodeMs: millis.optional(),
  summaryNodeMs: millis.optional(),
  /** Waited for the previous turn's summary (a turn routed to another specialist than that turn's). */
  summaryWaitMs: millis.optional(),
});

/** Per hop, something that hop reported: which node ran it, where it was placed, what it used. */
const perHop = <T extends z.ZodType>(fact: T) =>
  z.object({ route: fact.optional(), answer: fact.optional(), summary: fact.optional() });

/** The edge validator's verdict on a genui answer; `renderUrl` opens a valid one (a capability, 1 h). */
export const molGenuiSchema = z.object({
  status: z.enum(["valid", "rejected"]),
  findings: z.int().nonnegative(),
  summary: z.string(),
  componentId: z.string().optional(),
  renderUrl: z.string().optional(),
  renderUrlExpiresAt: z.int().optional(),
});
export type MolGenui = z.infer<typeof molGenuiSchema>;

/**
 * Where the turn's harness came from: a pin on the request (`x-mol-harness` or `metadata.mol_harness`), a pin on
 * the conversation (its `metadata.mol_harness`), the tenant's `production` label (its canary by a stable hash of
 * tenant and conversation), or the built-in default for the served model.
 */
export const molHarnessSourceSchema = z.enum(["request", "conversation", "label", "default"]);

/** A hop of the turn and the adapter it ran on: the name the harness asked for and the revision the node served. */
export const molHarnessAdapterSchema = z.object({
  /** `answer` once per answer: a repair step's answer is listed after the one it revises. */
  hop: z.enum(["route", "answer", "summary"]),
  /** As the harness names it: `label` (the node's default revision of it) or `label@<rev>` (exactly that one). */
  adapter: z.string(),
  /** The content fingerprint of what the node served; null on hops stored before nodes' revisions were kept. */
  revision: z.string().nullable(),
});
export type MolHarnessAdapter = z.infer<typeof molHarnessAdapterSchema>;

/** How the turn's harness was chosen: kept on the turn's user message (the adapters come from its hops). */
export const molHarnessChoiceSchema = z.object({
  /** The label it was chosen through; null for a hash pin and the default. */
  label: z.string().nullable(),
  /** Which version of the label: null where no label chose it. */
  arm: z.enum(["production", "canary"]).nullable(),
  source: molHarnessSourceSchema,
});

export type MolHarnessChoice = z.infer<typeof molHarnessChoiceSchema>;

export const molHarnessSchema = molHarnessChoiceSchema.extend({
  hash: z.string(),
  /**
   * The hops the turn ran so far, in order (route, answer, any repair answer, the summary once it has landed):
   * which adapter each asked for and which revision served it. A forced specialist has no route hop.
   */
  adapters: z.array(molHarnessAdapterSchema),
});
export type MolHarness = z.infer<typeof molHarnessSchema>;

/** The user's latest verdict on the turn (`POST /v1/responses/{id}/feedback`); absent until one is given. */
export const molFeedbackSchema = z.object({
  rating: z.enum(["positive", "negative"]),
  comment: z.string().optional(),
  /** Unix seconds. */
  createdAt: z.int(),
});
export type MolFeedback = z.infer<typeof molFeedbackSchema>;

export const molSchema = z.object({
  turnId: z.string(),
  harnessHash: z.string(),
  /** How the harness was chosen (absent on turns stored before the registry). */
  harness: molHarnessSchema.optional(),
  /** The specialist that answered (after any fallback). */
  label: z.string(),
  /** The adapter that ran the answer hop and its revision (content fingerprint). */
  adapter: z.string(),
  revision: z.string().optional(),
  source: molSourceSchema,
  /** The route decision: the router's probability for its label, and its own label when the low-confidence rule replaced it. */
  route: z
    .object({ confidence: z.number().min(0).max(1).optional(), lowConfidenceLabel: z.string().optional() })
    .optional(),
  fallback: molFallbackSchema.optional(),
  /** The node that ran each hop. */
  nodes: perHop(z.string()),
  timings: molTimingsSchema,
  /** Per hop: where the edge sent it and why (warm, spill, least-loaded, queue-group), with failed attempts. */
  placement: perHop(placementSchema),
  /** Per hop, as the GPU node measured it. */
  usage: perHop(usageSchema),
  /** Nodes that died mid-answer and the nodes that continued it from the text streamed (absent when none did). */
  takeovers: z.array(answerTakeoverSchema).optional(),
  summary: z.object({ status: z.enum(["pending", "ready", "failed", "none"]), text: z.string().optional() }),
  /** Genui answers only. */
  genui: molGenuiSchema.optional(),
  feedback: molFeedbackSchema.optional(),
});
export type TurnMol = z.infer<typeof molSchema>;
