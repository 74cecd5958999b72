import {
  DEFAULT_ANSWER_MAX_TOKENS,
  ROUTER_ADAPTER,
  SPECIALIST_LABELS,
  type SpecialistLabel,
} from "../wire/v2/index.ts";
import { CHAT_TEMPLATE_FAMILIES, type ChatTemplateFamily } from "./chat-templates.ts";
import { GENUI_CONTRACT_PROMPT, GENUI_CONTRACT_PROMPT_SHORT } from "./genui-contract-prompt.ts";
import {
  DEFAULT_ROUTE_MAX_TOKENS,
  HARNESS_VERSION,
  MAX_SUMMARY_TOKENS,
  MAX_VIEW_BUDGET_BYTES,
  type HarnessDocument,
  type SpecialistSettings,
} from "./harness-settings.ts";
import { measureViewRoom, readMaxUserMessageBytes } from "./measure-view-room.ts";
import { countUtf8Bytes } from "./utf8.ts";

/** The GPU nodes' default KV tokens per slot (`MOL_CONTEXT_SIZE`), and the context before any heartbeat. */
export const DEFAULT_CONTEXT_TOKENS = 4096;
/** The smallest slot context the per-model defaults fit; smaller ones need a configured harness. */
export const MIN_DEFAULT_CONTEXT_TOKENS = 2560;
/** The router's view: it only needs recent user lines and labels, so it stops growing at this size. */
const ROUTER_VIEW_MAX_BYTES = 2048;
/** Kept free of the specialist's view: the summary hop's instruction (~130 bytes) and its 192 tokens. */
const SPECIALIST_CONTEXT_RESERVE_TOKENS = 512;
/** ~400 English tokens of an answer per 4,096 tokens of context stay in the specialist's own view. */
const ANSWER_VIEW_SHARE = 0.375;
/** 192 tokens of English summary are ~800 bytes; longer ones are clipped in the views. */
const SUMMARY_VIEW_MAX_BYTES = 768;
const ROUTE_TIMEOUT_MS = 10_000;
const ANSWER_TIMEOUT_MS = 120_000;
const SUMMARY_TIMEOUT_MS = 30_000;
/**
 * The long genui prompt (~600 bytes more, in every genui view) is chosen only when, with it, the view still
 * has this much left after the header, the turn's reserve and a largest user line: room for earlier turns.
 * Below that the exemplar would make the view compact after almost every turn, and losing the conversation
 * costs the specialist more than the example gains it.
 */
const GENUI_LONG_PROMPT_SPARE_BYTES = 1024;

const OTHERS_NOTE = "Lines like [coding] … summarise turns another specialist answered.";

const SPECIALIST_PROMPTS: Record<SpecialistLabel, { prompt: string; temperature: number }> = {
  chat: {
    prompt: `You are the chat specialist of a team of assistants. Answer helpfully, clearly and concisely. ${OTHERS_NOTE}`,
    temperature: 0.7,
  },
  agent: {
    prompt: `You are the agent specialist. Break tasks into steps, name the tool or action each step needs, and report results precisely. ${OTHERS_NOTE}`,
    temperature: 0.3,
  },
  coding: {
    prompt: `You are the coding specialist. Write correct, idiomatic code with brief explanations; state assumptions and edge cases. ${OTHERS_NOTE}`,
    temperature: 0.2,
  },
  genui: { prompt: `${GENUI_CONTRACT_PROMPT} ${OTHERS_NOTE}`, temperature: 0.4 },
};
const GENUI_SHORT_PROMPT = `${GENUI_CONTRACT_PROMPT_SHORT} ${OTHERS_NOTE}`;

/** What the per-model defaults depend on: what the nodes serving the conversation advertise. */
export interface ServedModelProfile {
  family: ChatTemplateFamily;
  /** KV tokens per slot on those nodes. */
  contextTokens: number;
}

/**
 * Budgets from the served context, in bytes of view per token of context: every non-control token covers at
 * least one byte (byte-level BPE and byte-fallback SentencePiece alike) and each special token a template
 * inserts is written with more bytes than the one token it becomes, so a view of N bytes never takes more than
 * N tokens. A measured average (English is ~4 bytes per token) would use more of the context but is no bound:
 * CJK, emoji or random bytes come close to one token per byte, and a hop that overflows fails its turn.
 * At 4,096 tokens: the specialist's view is 3,584 bytes (the summary hop, the tightest, is 3,584 + ~130 + 192
 * tokens); at the answer hop the prompt is at most 3,584 - 1,547 (the reserve) bytes, so 512 answer tokens fit.
 */
function measureBudgets(contextTokens: number) {
  return {
    routerViewBudgetBytes: Math.min(ROUTER_VIEW_MAX_BYTES, Math.floor(contextTokens / 2)),
    specialistViewBudgetBytes: Math.min(
      MAX_VIEW_BUDGET_BYTES,
      contextTokens - SPECIALIST_CONTEXT_RESERVE_TOKENS,
    ),
    answerViewMaxBytes: Math.min(MAX_VIEW_BUDGET_BYTES / 4, Math.floor(contextTokens * ANSWER_VIEW_SHARE)),
  };
}

function makeSpecialist(label: SpecialistLabel, model: ServedModelProfile): SpecialistSettings {
  const { prompt, temperature } = SPECIALIST_PROMPTS[label];
  const budgets = measureBudgets(model.contextTokens);
  return {
    adapter: label,
    systemPrompt: prompt,
    sampling: {
      maxTokens: DEFAULT_ANSWER_MAX_TOKENS,
      temperature,
      topP: 0.95,
      topK: 40,
      stop: [...CHAT_TEMPLATE_FAMILIES[model.family].answerStop],
    },
    answerTimeoutMs: ANSWER_TIMEOUT_MS,
    viewBudgetBytes: budgets.specialistViewBudgetBytes,
    answerViewMaxBytes: budgets.answerViewMaxBytes,
    summary: {
      instruction: "Summarise your last answer in at most three sentences, for the other specialists.",
      maxTokens: MAX_SUMMARY_TOKENS,
      timeoutMs: SUMMARY_TIMEOUT_MS,
      viewMaxBytes: SUMMARY_VIEW_MAX_BYTES,
    },
  };
}

/**
 * The per-model defaults: the family's templates and stop strings, budgets from the served context. A
 * configured harness document (see harness-config.ts) is laid over these.
 */
export function buildDefaultHarness(model: ServedModelProfile): HarnessDocument {
  if (model.contextTokens < MIN_DEFAULT_CONTEXT_TOKENS) {
    throw new RangeError(
      `the default harness needs a context of at least ${MIN_DEFAULT_CONTEXT_TOKENS} tokens, not ${model.contextTokens}; configure a harness document`,
    );
  }
  const budgets = measureBudgets(model.contextTokens);
  const harness: HarnessDocument = {
    version: HARNESS_VERSION,
    contextTokens: model.contextTokens,
    router: {
      adapter: ROUTER_ADAPTER,
      systemPrompt:
        "Route each user message to one specialist: chat (conversation, questions, advice), agent (multi-step " +
        "tasks, tools, planning), coding (code, debugging, programming), genui (user interfaces, layouts).",
      labels: [...SPECIALIST_LABELS],
      maxTokens: DEFAULT_ROUTE_MAX_TOKENS,
      reasoningMaxTokens: 0,
      timeoutMs: ROUTE_TIMEOUT_MS,
      viewBudgetBytes: budgets.routerViewBudgetBytes,
      maxUserMessageChars: 240,
    },
    specialists: Object.fromEntries(SPECIALIST_LABELS.map((label) => [label, makeSpecialist(label, model)])),
    defaultLabel: "chat",
    templates: { ...CHAT_TEMPLATE_FAMILIES[model.family].templates },
    compaction: {
      keepFullFraction: 0.5,
      compactMaxFraction: 0.3,
      compactKeepFraction: 0.15,
      compactUserMessageChars: 120,
    },
  };
  return fitGenuiPrompt(harness);
}

/** Keeps the long genui prompt only where its view has GENUI_LONG_PROMPT_SPARE_BYTES to spare with it. */
function fitGenuiPrompt(harness: HarnessDocument): HarnessDocument {
  const genui = harness.specialists.genui;
  if (!genui) return harness;
  const { templates } = harness;
  const userLineBytes =
    countUtf8Bytes(templates.userPrefix) +
    readMaxUserMessageBytes(harness) +
    countUtf8Bytes(templates.userEnd ?? templates.lineEnd);
  const spareBytes = measureViewRoom(harness, "genui").roomBytes - userLineBytes;
  if (spareBytes >= GENUI_LONG_PROMPT_SPARE_BYTES) return harness;
  return {
    ...harness,
    specialists: { ...harness.specialists, genui: { ...genui, systemPrompt: GENUI_SHORT_PROMPT } },
  };
}

/** The harness before any node has said what it serves: the plain format on a 4,096-token context. */
export const DEFAULT_HARNESS: HarnessDocument = buildDefaultHarness({
  family: "plain",
  contextTokens: DEFAULT_CONTEXT_TOKENS,
});
