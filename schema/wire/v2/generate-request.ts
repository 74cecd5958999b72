import { z } from "zod";
import { adapterIdSchema } from "./adapter-id.ts";
import { adapterNameSchema } from "./adapter-name.ts";
import { outputConstraintSchema } from "./output-constraint.ts";
import { priorityClassSchema } from "./priority.ts";
import { samplingSchema } from "./sampling.ts";
import { wireVersionSchema } from "./version.ts";

/** Longest deadline a request may ask for, in milliseconds. */
export const MAX_HOP_TIMEOUT_MS = 600_000;
/** Largest prompt accepted on the wire, in UTF-16 code units; NATS' default max payload is 1 MiB. */
export const MAX_PROMPT_CHARS = 400_000;
/** Most choices one request may score. */
export const MAX_CHOICES = 32;
/** Most tokens of free text before a choice (see {@link choiceConstraintSchema}). */
export const MAX_REASONING_TOKENS = 256;
/** Templates are short; this bounds what a node evaluates unasked after a choice. */
const MAX_AFTER_CHOICE_CHARS = 256;
/** A GBNF grammar (llama.cpp's format); the node compiles it once and keeps it in a bounded cache. */
const MAX_GRAMMAR_CHARS = 64_000;
/** Most alternatives per token a request may ask for with `return.tokens`. */
export const MAX_TOP_LOGPROBS = 20;

/**
 * Exactly one of `choices` (labels: NATS-token and GBNF-literal safe). The node scores every choice where its engine
 * can (so the reply can carry their probabilities), else decodes under a grammar admitting only them. With
 * `reasoningMaxTokens`, up to that many tokens of free text are decoded first, ending at a newline; the choice
 * follows on the next line. `afterChoice` is what the slot's next prompt holds right after the chosen choice (the
 * route line's end and the next user line's opening, in the prompt's own text): an engine keeping KV slots evaluates
 * choice + that once it has replied, so the next request prefills only what is new. Ignored with reasoning, whose
 * text the next prompt does not hold.
 */
export const choiceConstraintSchema = z.object({
  type: z.literal("choice"),
  choices: z
    .array(adapterIdSchema)
    .min(1)
    .max(MAX_CHOICES)
    .refine((choices) => new Set(choices).size === choices.length, "choices must be unique"),
  reasoningMaxTokens: z.int().min(0).max(MAX_REASONING_TOKENS).default(0),
  afterChoice: z.string().max(MAX_AFTER_CHOICE_CHARS).optional(),
});
export type ChoiceConstraint = z.infer<typeof choiceConstraintSchema>;

/** Output that the GBNF grammar `gbnf` (root rule `root`) accepts; for nodes listing `output:grammar`. */
export const grammarConstraintSchema = z.object({
  type: z.literal("grammar"),
  gbnf: z.string().min(1).max(MAX_GRAMMAR_CHARS),
});
export type GrammarConstraint = z.infer<typeof grammarConstraintSchema>;

/**
 * What the output is decoded under: absent, free text; `choice` over labels; or an output constraint of the public
 * API (`json_schema`, `json_object`, `tools`), or a grammar. Each engine compiles it to its own mechanism, so the
 * output always parses (and for schemas validates).
 */
export const generateConstraintSchema = z.discriminatedUnion("type", [
  choiceConstraintSchema,
  grammarConstraintSchema,
  ...outputConstraintSchema.options,
]);
export type GenerateConstraint = z.infer<typeof generateConstraintSchema>;
export type GenerateConstraintInput = z.input<typeof generateConstraintSchema>;

/** What the reply carries besides the text and usage. */
export const returnOptionsSchema = z.object({
  /** Parts as they are decoded (`start`, deltas, `finish`); else one `result` message. */
  stream: z.boolean().default(false),
  /** Under a `choice` constraint: each choice's probability, where the engine can score them. */
  choiceProbabilities: z.boolean().default(false),
  /**
   * The engine's token ids of the completion, each with its logprob (and the prompt's ids): for nodes listing
   * `return:tokens`; others refuse the request (`bad_request`) rather than answer without them.
   */
  tokens: z.boolean().default(false),
  /** With `tokens`: this many most likely alternatives per position. */
  topLogprobs: z.int().min(0).max(MAX_TOP_LOGPROBS).default(0),
});
export type ReturnOptions = z.infer<typeof returnOptionsSchema>;

/**
 * The one request a GPU node serves: a completion of `prompt` by `adapter`, on the KV slot `slotKey`, under
 * `constraint`, scheduled as `priority`. Route, answer and summary are edge-side functions over it. Strict: a field
 * this node does not know is refused (`bad_request`), never silently dropped, so a request whose output must be
 * constrained can never be answered unconstrained by a node that predates the field; senders choose nodes whose
 * heartbeat lists what they need (`features`). The deadline is relative, so clocks need not agree across machines.
 */
export const generateRequestSchema = z
  .strictObject({
    version: wireVersionSchema,
    type: z.literal("generate"),
    requestId: z.string().min(1).max(128),
    /** Stable across retries of the same turn on other nodes. */
    turnId: z.string().min(1).max(128).optional(),
    /** Whose request this is: the node queues requests fairly across tenants (deficit round robin). */
    tenantId: z.string().min(1).max(128).optional(),
    /** `label` (the node's default revision of it) or `label@<rev>` (exactly that revision). */
    adapter: adapterNameSchema,
    /**
     * The exact prompt (the adapter's view and its cue); engines apply no chat template on top. Special tokens the
     * harness templates inserted sit between the sentinels of schema/harness/chat-templates.ts.
     */
    prompt: z.string().min(1).max(MAX_PROMPT_CHARS),
    /**
     * The KV slot: the engine keeps one warm sequence per (adapter, slot key), so the next prompt of the same key
     * reuses this one's prefix. The edge sends the conversation id (or a stateless client's cache key).
     */
    slotKey: z.string().min(1).max(128),
    priority: priorityClassSchema,
    constraint: generateConstraintSchema.optional(),
    /** The token budget is `sampling.maxTokens`; with a choice it must cover the reasoning and the longest choice. */
    sampling: samplingSchema.default(samplingSchema.parse({})),
    return: returnOptionsSchema.default(returnOptionsSchema.parse({})),
    timeoutMs: z.int().min(1).max(MAX_HOP_TIMEOUT_MS),
  })
  .superRefine((request, ctx) => {
    const { constraint } = request;
    if (constraint?.type !== "choice") return;
    const longest = Math.max(...constraint.choices.map(choiceByteLength));
    if (constraint.reasoningMaxTokens + longest > request.sampling.maxTokens) {
      ctx.addIssue({
        code: "custom",
        path: ["sampling", "maxTokens"],
        message:
          "must cover constraint.reasoningMaxTokens plus the longest choice's bytes (one token per byte at worst)",
      });
    }
  });
export type GenerateRequest = z.infer<typeof generateRequestSchema>;
export type GenerateRequestInput = z.input<typeof generateRequestSchema>;

/** A choice can never take more tokens than bytes: every non-control token covers at least one byte. */
export function choiceByteLength(choice: string): number {
  return new TextEncoder().encode(choice).length;
}
