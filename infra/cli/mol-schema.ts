import { z } from "zod";

// Loose on purpose: the CLI reads the few facts it prints and passes the rest through untouched (--json),
// so a newer mesh that adds fields still works with an older CLI.

export const hopUsageSchema = z.looseObject({
  promptTokens: z.number(),
  cachedPromptTokens: z.number(),
  completionTokens: z.number(),
});
export type HopUsage = z.infer<typeof hopUsageSchema>;

/** The `mol` object on responses and assistant items: how the mesh ran the turn. */
export const molSchema = z.looseObject({
  label: z.string(),
  adapter: z.string().optional(),
  revision: z.string().optional(),
  source: z.string(),
  fallback: z
    .looseObject({ code: z.string(), message: z.string().optional(), to: z.string().optional() })
    .optional(),
  timings: z
    .looseObject({
      routeMs: z.number().optional(),
      answerFirstTokenMs: z.number().optional(),
      answerTotalMs: z.number().optional(),
    })
    .optional(),
  usage: z
    .looseObject({
      route: hopUsageSchema.optional(),
      answer: hopUsageSchema.optional(),
      summary: hopUsageSchema.optional(),
    })
    .optional(),
  summary: z.looseObject({ status: z.string(), text: z.string().optional() }).optional(),
});
export type Mol = z.infer<typeof molSchema>;
