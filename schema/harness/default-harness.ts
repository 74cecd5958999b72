import {
  DEFAULT_ANSWER_MAX_TOKENS,
  DEFAULT_ROUTE_MAX_TOKENS,
  MAX_SUMMARY_TOKENS,
  ROUTER_ADAPTER,
  SPECIALIST_LABELS,
  type SpecialistLabel,
} from "../wire/v1/index.ts";
import { HARNESS_VERSION, type HarnessDocument, type SpecialistSettings } from "./harness-settings.ts";

/** The GPU nodes' default KV tokens per slot (`MOL_CONTEXT_SIZE`). */
const CONTEXT_TOKENS = 4096;
/** Router view: small, it only needs recent user lines and labels; 2048 + 24 route tokens fit 4096. */
const ROUTER_VIEW_BUDGET_BYTES = 2048;
/**
 * Specialist view, its answer included. The summary hop is the tightest: 3584-byte view + ~130-byte
 * instruction + 192 summary tokens ≤ 4096 tokens. At the answer hop the prompt is at most
 * 3584 - 1547 (the reserve) bytes, so 512 answer tokens fit with room to spare.
 */
const SPECIALIST_VIEW_BUDGET_BYTES = 3584;
/** ~400 English tokens of an answer stay in the specialist's own view; the client always gets all of it. */
const ANSWER_VIEW_MAX_BYTES = 1536;
/** 192 tokens of English summary are ~800 bytes; longer ones are clipped in the views. */
const SUMMARY_VIEW_MAX_BYTES = 768;
const ROUTE_TIMEOUT_MS = 10_000;
const ANSWER_TIMEOUT_MS = 120_000;
const SUMMARY_TIMEOUT_MS = 30_000;

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
  genui: {
    prompt: `You are the generative UI specialist. Produce user interface components and layouts as concise, valid markup. ${OTHERS_NOTE}`,
    temperature: 0.4,
  },
};

function makeSpecialist(label: SpecialistLabel): SpecialistSettings {
  const { prompt, temperature } = SPECIALIST_PROMPTS[label];
  return {
    adapter: label,
    systemPrompt: prompt,
    // The model would otherwise go on to write the user's next line itself.
    sampling: { maxTokens: DEFAULT_ANSWER_MAX_TOKENS, temperature, topP: 0.95, topK: 40, stop: ["\nuser:"] },
    answerTimeoutMs: ANSWER_TIMEOUT_MS,
    viewBudgetBytes: SPECIALIST_VIEW_BUDGET_BYTES,
    answerViewMaxBytes: ANSWER_VIEW_MAX_BYTES,
    summary: {
      instruction: "Summarise your last answer in at most three sentences, for the other specialists.",
      maxTokens: MAX_SUMMARY_TOKENS,
      timeoutMs: SUMMARY_TIMEOUT_MS,
      viewMaxBytes: SUMMARY_VIEW_MAX_BYTES,
    },
  };
}

export const DEFAULT_HARNESS: HarnessDocument = {
  version: HARNESS_VERSION,
  contextTokens: CONTEXT_TOKENS,
  router: {
    adapter: ROUTER_ADAPTER,
    systemPrompt:
      "Route each user message to one specialist: chat (conversation, questions, advice), agent (multi-step " +
      "tasks, tools, planning), coding (code, debugging, programming), genui (user interfaces, layouts).",
    labels: [...SPECIALIST_LABELS],
    maxTokens: DEFAULT_ROUTE_MAX_TOKENS,
    reasoningMaxTokens: 0,
    timeoutMs: ROUTE_TIMEOUT_MS,
    viewBudgetBytes: ROUTER_VIEW_BUDGET_BYTES,
    maxUserMessageChars: 240,
  },
  specialists: Object.fromEntries(SPECIALIST_LABELS.map((label) => [label, makeSpecialist(label)])),
  defaultLabel: "chat",
  templates: {
    systemPrefix: "system: ",
    userPrefix: "user: ",
    assistantCue: "assistant:",
    routeCue: "route:",
    summaryLine: "[{label}] {text}",
    summaryCue: "summary:",
    lineEnd: "\n",
    clippedMark: "…",
  },
  compaction: {
    keepFullFraction: 0.5,
    compactMaxFraction: 0.3,
    compactKeepFraction: 0.15,
    compactUserMessageChars: 120,
  },
};
