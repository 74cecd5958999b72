import { CHAT_TEMPLATE_FAMILIES, chatTemplateFamilySchema } from "../../schema/harness/chat-templates.ts";
import { DEFAULT_HARNESS, buildDefaultHarness } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import type { SummaryWaitSettings } from "../../schema/harness/harness-settings.ts";
import { SPECIALIST_LABELS } from "../../schema/wire/v2/index.ts";
import { readViewText, type ConversationViews } from "../../workers/src/views/conversation-views.ts";

/** Replaces every specialist's settings with `patch` applied, and validates the result. */
function withSpecialists(
  base: HarnessDocument,
  patch: (s: HarnessDocument["specialists"][string]) => HarnessDocument["specialists"][string],
): HarnessDocument["specialists"] {
  return Object.fromEntries(
    SPECIALIST_LABELS.map((label) => {
      const specialist = base.specialists[label];
      if (!specialist) throw new Error(`no ${label}`);
      return [label, patch(specialist)];
    }),
  );
}

/** Budgets so large that no generated conversation ever compacts. */
export const LARGE_HARNESS: HarnessDocument = harnessDocumentSchema.parse({
  ...DEFAULT_HARNESS,
  contextTokens: 1_048_576,
  router: { ...DEFAULT_HARNESS.router, viewBudgetBytes: 131_072 },
  specialists: withSpecialists(DEFAULT_HARNESS, (s) => ({ ...s, viewBudgetBytes: 131_072 })),
});

/** Small budgets: generated conversations compact within a few turns. */
export const SMALL_HARNESS: HarnessDocument = harnessDocumentSchema.parse({
  ...DEFAULT_HARNESS,
  router: { ...DEFAULT_HARNESS.router, viewBudgetBytes: 700, maxUserMessageChars: 60 },
  specialists: withSpecialists(DEFAULT_HARNESS, (s) => ({
    ...s,
    // The genui contract prompt (~900 bytes) would leave these small views no room; a short one keeps them small.
    systemPrompt: s.adapter === "genui" ? "You are the generative UI specialist." : s.systemPrompt,
    viewBudgetBytes: 1600,
    answerViewMaxBytes: 256,
    summary: { ...s.summary, viewMaxBytes: 128 },
  })),
  compaction: { ...DEFAULT_HARNESS.compaction, compactUserMessageChars: 30 },
});

/** The default harness with answers clipped shorter, so turns are small next to the room (as in real use). */
export const ROOMY_HARNESS: HarnessDocument = harnessDocumentSchema.parse({
  ...DEFAULT_HARNESS,
  specialists: withSpecialists(DEFAULT_HARNESS, (s) => ({ ...s, answerViewMaxBytes: 512 })),
});

/** The default harness with worked routing examples in the router's header. */
export const EXEMPLAR_HARNESS: HarnessDocument = harnessDocumentSchema.parse({
  ...DEFAULT_HARNESS,
  router: {
    ...DEFAULT_HARNESS.router,
    exemplars: [
      { text: "Write a Python function that reverses a list", label: "coding" },
      { text: "Book me a table for two and add it to my calendar", label: "agent" },
      { text: "Show me a form to pick a date", label: "genui" },
      { text: "How was your weekend?", label: "chat" },
    ],
  },
});

/** `harness` under another summary wait policy. */
export function withSummaryWait(harness: HarnessDocument, summaryWait: SummaryWaitSettings): HarnessDocument {
  return harnessDocumentSchema.parse({ ...harness, summaryWait });
}

/** The default harness as it ran before the interim line: a turn routed elsewhere waits for the summary. */
export const BOUNDED_HARNESS = withSummaryWait(DEFAULT_HARNESS, { mode: "bounded" });
/** Small budgets and the smallest interim line: the opening's clip and the compactions meet often. */
export const SMALL_INTERIM_HARNESS = withSummaryWait(SMALL_HARNESS, { mode: "interim", interimMaxBytes: 16 });

export function listAdapters(harness: HarnessDocument): string[] {
  return [harness.router.adapter, ...harness.router.labels];
}

/** Byte-prefix, not string prefix: the KV cache is about bytes (and tokens) the engine already holds. */
export function isBytePrefix(prefix: string, text: string): boolean {
  const a = new TextEncoder().encode(prefix);
  const b = new TextEncoder().encode(text);
  return a.length <= b.length && a.every((byte, i) => byte === b[i]);
}

/** Every adapter's view text, in `listAdapters` order. */
export function snapshotTexts(views: ConversationViews, harness: HarnessDocument): string[] {
  return listAdapters(harness).map((adapter) => readViewText(views, adapter));
}

/** The per-model defaults of every chat format, on the default 4,096-token context and on SmolLM2's 8,192. */
export const FAMILY_HARNESSES: Array<[string, HarnessDocument]> = chatTemplateFamilySchema.options.flatMap(
  (family): Array<[string, HarnessDocument]> => [
    [`${family} 4096`, harnessDocumentSchema.parse(buildDefaultHarness({ family, contextTokens: 4096 }))],
    [`${family} 8192`, harnessDocumentSchema.parse(buildDefaultHarness({ family, contextTokens: 8192 }))],
  ],
);

/** SMALL_HARNESS in the ChatML and Llama-2 formats: their views compact within a few turns too. */
export const SMALL_FAMILY_HARNESSES: Array<[string, HarnessDocument]> = (["chatml", "llama2"] as const).map(
  (family) => [
    `small ${family}`,
    harnessDocumentSchema.parse({ ...SMALL_HARNESS, templates: CHAT_TEMPLATE_FAMILIES[family].templates }),
  ],
);
