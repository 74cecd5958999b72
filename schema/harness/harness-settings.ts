import { z } from "zod";
import {
  MAX_HOP_TIMEOUT_MS,
  MAX_REASONING_TOKENS,
  adapterIdSchema,
  adapterNameSchema,
  parseAdapterName,
  samplingSchema,
} from "../wire/v2/index.ts";
import { GENUI_CONTRACT_VERSION } from "./genui-contract-prompt.ts";
import { specialistOutputSchema, specialistToolPolicySchema } from "./specialist-output.ts";

/** Literal version of the harness document; a change of shape gets a new one. */
export const HARNESS_VERSION = "molmesh.harness.v1" as const;

/** Summaries are short by contract: they are what other specialists see of a turn. */
export const MAX_SUMMARY_TOKENS = 192;
/** Default token budget of the route output (reasoning prefix + label). */
export const DEFAULT_ROUTE_MAX_TOKENS = 24;
/** Largest route output budget: the reasoning budget plus the longest label. */
export const MAX_ROUTE_MAX_TOKENS = MAX_REASONING_TOKENS + 32;

/** Largest view budget a harness may ask for, in bytes (a 128k-token context, one byte per token). */
export const MAX_VIEW_BUDGET_BYTES = 131_072;

const timeoutMsSchema = z.int().min(1).max(MAX_HOP_TIMEOUT_MS);
const budgetBytesSchema = z.int().min(256).max(MAX_VIEW_BUDGET_BYTES);
const promptSchema = z
  .string()
  .max(8192)
  .refine((t) => !/[\uE000\uE001]/.test(t), {
    message: "prompts must not contain U+E000 or U+E001 (they mark template special tokens)",
  });
const fractionSchema = z.number().gt(0).lt(1);
const answerPrefixSchema = z
  .string()
  .min(1)
  .max(2048)
  .refine((t) => !/[\uE000\uE001]/.test(t), {
    message: "answerPrefix must not contain U+E000 or U+E001 (they mark template special tokens)",
  });

/** One worked routing example: a user message and the label the router should answer with. */
export const routerExemplarSchema = z.strictObject({
  /** Non-empty as a JSON Schema `minLength` (the OpenAPI document says so too). */
  text: z
    .string()
    .min(1)
    .max(8192)
    .refine((t) => !/[\uE000\uE001]/.test(t), {
      message: "exemplars must not contain U+E000 or U+E001 (they mark template special tokens)",
    }),
  label: adapterIdSchema,
});
export type RouterExemplar = z.infer<typeof routerExemplarSchema>;

/**
 * Budgets are in UTF-8 BYTES, not tokens: every non-control token covers at least one byte, so a view of
 * N bytes never takes more than N tokens, whatever the tokenizer. That makes the bound a guarantee rather
 * than an estimate, and lets the edge enforce it without a tokenizer.
 */
export const routerSettingsSchema = z.strictObject({
  /** `l0`, or a revision of it (`l0@<rev>`): the adapter every route request names. */
  adapter: adapterNameSchema,
  systemPrompt: promptSchema,
  /** The labels the route grammar admits; the same set as the specialists. */
  labels: z.array(adapterIdSchema).min(1).max(32),
  maxTokens: z.int().min(1).max(MAX_ROUTE_MAX_TOKENS),
  reasoningMaxTokens: z.int().min(0).max(MAX_REASONING_TOKENS),
  timeoutMs: timeoutMsSchema,
  viewBudgetBytes: budgetBytesSchema,
  /** The router's view keeps at most this many code points of each user message. */
  maxUserMessageChars: z.int().min(1).max(4096),
  /**
   * Under this route confidence the turn keeps the previous turn's specialist (a first turn takes the router's
   * label anyway). Absent = the router's label always stands. Chosen on dev by `npm run eval:route`.
   */
  minConfidence: z.number().min(0).max(1).optional(),
  /**
   * Worked examples in the router's view, after its system line: each a user line and the route line naming its
   * label, rendered exactly as a conversation's turns are (so the route grammar and the view format stay one).
   * They sit in the view's header, before every conversation turn, so they never compact and a conversation's
   * KV prefix starts with them. Absent or empty: none (a trained router needs none).
   */
  exemplars: z.array(routerExemplarSchema).max(32).optional(),
});
export type RouterSettings = z.infer<typeof routerSettingsSchema>;

export const summarySettingsSchema = z.strictObject({
  /** Asked after the specialist's view (which then ends with its answer). */
  instruction: promptSchema,
  maxTokens: z.int().min(1).max(MAX_SUMMARY_TOKENS),
  timeoutMs: timeoutMsSchema,
  /** Longest summary kept in other views; longer ones are clipped there (never in storage). */
  viewMaxBytes: z.int().min(16).max(MAX_VIEW_BUDGET_BYTES),
});
export type SummarySettings = z.infer<typeof summarySettingsSchema>;

export const specialistSettingsSchema = z.strictObject({
  /** The specialist's label, or a revision of it (`label@<rev>`): the adapter its requests name. */
  adapter: adapterNameSchema,
  systemPrompt: promptSchema,
  /** Strict here (a harness is checked key by key); the wire's own sampling object is checked by its request. */
  sampling: samplingSchema.strict(),
  answerTimeoutMs: timeoutMsSchema,
  /** Bounds the whole view, this turn's answer included. */
  viewBudgetBytes: budgetBytesSchema,
  /** Longest answer kept in the specialist's own view; longer ones are clipped there (never for the client). */
  answerViewMaxBytes: z.int().min(16).max(MAX_VIEW_BUDGET_BYTES),
  /**
   * The answer's opening, prefilled (absent: none). The answer hop's prompt ends with it inside the assistant
   * turn and the model continues it; the stored answer and the client's stream start with it, so the views stay
   * a function of the timeline and each prompt a prefix of the next view. Not used under an output constraint
   * (tools, JSON): their grammar decides how an answer starts.
   */
  answerPrefix: answerPrefixSchema.optional(),
  /**
   * What its answers are decoded under when the request sets no output constraint (absent: free text). The
   * request's own `response_format` or tools win: the client's contract comes first.
   */
  output: specialistOutputSchema.optional(),
  /** What it may do with the request's function tools (absent: what the request says). */
  tools: specialistToolPolicySchema.optional(),
  summary: summarySettingsSchema,
});
export type SpecialistSettings = z.infer<typeof specialistSettingsSchema>;

/** Every piece of text the views are made of, besides prompts and conversation text. */
export const harnessTemplatesSchema = z.strictObject({
  systemPrefix: z.string().max(64),
  /** Ends a system line instead of `lineEnd` (Llama-2 closes `<<SYS>>` and `[INST]` there). */
  systemEnd: z.string().min(1).max(64).optional(),
  userPrefix: z.string().max(64),
  /** Ends a user line instead of `lineEnd` (Llama-2 closes `[INST]` there). */
  userEnd: z.string().min(1).max(64).optional(),
  /** The answer prompt ends with it; the model's text continues right after. */
  assistantCue: z.string().max(64),
  /** The route prompt ends with it; the label follows directly. */
  routeCue: z.string().max(64),
  /** How a summary appears in the other specialists' views. */
  summaryLine: z
    .string()
    .max(128)
    .refine((t) => t.split("{label}").length === 2 && t.split("{text}").length === 2, {
      message: "summaryLine must contain {label} and {text} exactly once",
    }),
  /** The summary prompt ends with it. */
  summaryCue: z.string().max(64),
  /**
   * Ends every line (user, route, answer, summary, system) unless a line kind has its own end. Chat formats
   * put their end-of-turn special token here, between the sentinels of chat-templates.ts.
   */
  lineEnd: z.string().min(1).max(64),
  /** Stands for the rest of a truncated or clipped text. */
  clippedMark: z.string().max(8),
});
export type HarnessTemplates = z.infer<typeof harnessTemplatesSchema>;

/** How a view that would pass its budget is shortened; fractions of the room a turn starts with. */
export const compactionSettingsSchema = z.strictObject({
  /** After a compaction, the turns kept in full take at most this fraction of the room. */
  keepFullFraction: fractionSchema,
  /** Compact forms may grow to this fraction of the room before the oldest are dropped… */
  compactMaxFraction: fractionSchema,
  /** …down to this fraction, so drops are rare and large. */
  compactKeepFraction: fractionSchema,
  /** A compacted turn keeps at most this many code points of its user message. */
  compactUserMessageChars: z.int().min(1).max(4096),
});
export type CompactionSettings = z.infer<typeof compactionSettingsSchema>;

/** The interim line's answer opening, when the harness does not set one: a sentence or two of English. */
export const DEFAULT_INTERIM_MAX_BYTES = 160;

/**
 * What a turn does about the previous turn's summary when that summary is still running as its user line goes
 * in (summaries run off the critical path, and a summary can reach a view in full only before the next user
 * line: see views-reducer.ts).
 * - `interim` (the default): no turn waits. The other specialists' views get an interim line for the previous
 *   turn, in the summary line's form: a marked opening of the answer, at most `interimMaxBytes` (and never more
 *   than that specialist's `summary.viewMaxBytes`, so it fits the reserve a summary line has). The summary, when
 *   it lands, reaches only the compact forms of its turn. A summary that failed leaves no interim line.
 * - `bounded`: a turn routed to another specialist than the previous turn's waits for that summary, at most
 *   `maxMs` (absent: the summary hop's own bound); one later still reaches only the compact forms, and the views
 *   show nothing of that answer until its turn compacts.
 */
export const summaryWaitSettingsSchema = z.discriminatedUnion("mode", [
  z.strictObject({
    mode: z.literal("interim"),
    interimMaxBytes: z.int().min(16).max(MAX_VIEW_BUDGET_BYTES).optional(),
  }),
  z.strictObject({ mode: z.literal("bounded"), maxMs: timeoutMsSchema.optional() }),
]);
export type SummaryWaitSettings = z.infer<typeof summaryWaitSettingsSchema>;

/** A step kind's name, as the edge's step registry knows it (workers/src/steps/). */
export const stepKindSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, "step kinds are 1-32 chars of [a-z0-9-]");

/**
 * One step of a turn's program. `background` steps run after the client's response has ended and the next turn may
 * start (the summary), in program order; the others run in order on the turn's critical path. `options` are the
 * kind's own settings, validated by its definition when the harness is resolved.
 */
export const turnStepSchema = z.strictObject({
  kind: stepKindSchema,
  /** How steps refer to this one (a repair step going back to a check); default: the kind. Unique in a program. */
  name: stepKindSchema.optional(),
  background: z.boolean().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});
export type TurnStep = z.infer<typeof turnStepSchema>;

/**
 * When a turn's program stops before its steps are done: after `maxSteps` steps have run (a step may send the turn
 * back to an earlier one), once the turn's completions used `maxCompletionTokens`, or `maxMs` after it started. A
 * turn stopped before it has an answer fails (`turn_failed`); one stopped after keeps the answer it has.
 */
export const turnStopSchema = z.strictObject({
  maxSteps: z.int().min(1).max(64),
  maxCompletionTokens: z.int().min(1).max(1_000_000).optional(),
  maxMs: timeoutMsSchema.optional(),
});
export type TurnStop = z.infer<typeof turnStopSchema>;

export const turnProgramSchema = z
  .strictObject({ steps: z.array(turnStepSchema).min(1).max(32), stop: turnStopSchema })
  .superRefine((program, ctx) => {
    const names = program.steps.map((step) => step.name ?? step.kind);
    names.forEach((name, i) => {
      if (names.indexOf(name) !== i)
        ctx.addIssue({
          code: "custom",
          path: ["steps", i, "name"],
          message: `two steps are named "${name}"`,
        });
    });
    const firstBackground = program.steps.findIndex((step) => step.background === true);
    if (
      firstBackground >= 0 &&
      program.steps.slice(firstBackground).some((step) => step.background !== true)
    ) {
      ctx.addIssue({ code: "custom", path: ["steps"], message: "background steps must come last" });
    }
  });
export type TurnProgram = z.infer<typeof turnProgramSchema>;

/**
 * The program of a harness that names none: route, answer, the genui check, the output check, then the summary in the
 * background.
 */
export const DEFAULT_TURN_PROGRAM: TurnProgram = {
  steps: [
    { kind: "route" },
    { kind: "answer" },
    { kind: "genui-check" },
    { kind: "output-check" },
    { kind: "summary", background: true },
  ],
  stop: { maxSteps: 16 },
};

/**
 * The GenUI contract the harness's genui answers are held to: the contract's version (the edge refuses a version
 * it does not implement, so a harness written for a later contract fails at push, not on a turn) and the labels
 * whose answers are components, validated by the `genui-check` step.
 */
export const genuiSettingsSchema = z.strictObject({
  contract: z.literal(GENUI_CONTRACT_VERSION),
  /** Unique (checked in harness-document.ts; said in the JSON Schema here). */
  labels: z.array(adapterIdSchema).max(32).meta({ uniqueItems: true }),
});
export type GenuiSettings = z.infer<typeof genuiSettingsSchema>;

/** A harness naming no `genui`: the current contract, for the `genui` label when the harness has one. */
export const DEFAULT_GENUI_LABEL = "genui";

export const harnessFieldsSchema = z.strictObject({
  version: z.literal(HARNESS_VERSION),
  /** KV tokens per slot on the GPU nodes (`MOL_CONTEXT_SIZE`); every hop's prompt + completion must fit. */
  contextTokens: z.int().min(256).max(1_048_576),
  router: routerSettingsSchema,
  /** Keyed by label. Views iterate `router.labels`, never these keys, so key order cannot matter. */
  specialists: z.record(adapterIdSchema, specialistSettingsSchema),
  /** Where a turn goes when the router fails and there is no previous label. */
  defaultLabel: adapterIdSchema,
  templates: harnessTemplatesSchema,
  compaction: compactionSettingsSchema,
  /** Absent: `{ mode: "interim" }`. */
  summaryWait: summaryWaitSettingsSchema.optional(),
  /** The steps a turn runs; absent: {@link DEFAULT_TURN_PROGRAM}. */
  turn: turnProgramSchema.optional(),
  /** Absent: {@link GENUI_CONTRACT_VERSION} for the `genui` label, if the harness has one. */
  genui: genuiSettingsSchema.optional(),
});
export type HarnessDocument = z.infer<typeof harnessFieldsSchema>;
export type HarnessDocumentInput = z.input<typeof harnessFieldsSchema>;

/** Own keys only: a label such as "constructor" must not find Object.prototype's members. */
export function findSpecialist(harness: HarnessDocument, label: string): SpecialistSettings | undefined {
  return Object.hasOwn(harness.specialists, label) ? harness.specialists[label] : undefined;
}

/** The harness's summary wait policy, its default filled in. */
export function readSummaryWait(harness: HarnessDocument): SummaryWaitSettings {
  return harness.summaryWait ?? { mode: "interim" };
}

/** The harness's turn program, its default filled in. */
export function readTurnProgram(harness: HarnessDocument): TurnProgram {
  return harness.turn ?? DEFAULT_TURN_PROGRAM;
}

/** The harness's GenUI contract, its default filled in. */
export function readGenuiSettings(harness: HarnessDocument): GenuiSettings {
  return (
    harness.genui ?? {
      contract: GENUI_CONTRACT_VERSION,
      labels: harness.router.labels.includes(DEFAULT_GENUI_LABEL) ? [DEFAULT_GENUI_LABEL] : [],
    }
  );
}

/** The label an adapter name stands for (`chat@0123abcd…` → `chat`). */
export function adapterLabel(adapter: string): string {
  return parseAdapterName(adapter).label;
}
