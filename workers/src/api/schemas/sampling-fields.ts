import { z } from "@hono/zod-openapi";
import { MAX_COMPLETION_TOKENS } from "../../../../schema/wire/v2/index.ts";

// The bounds are the wire's (schema/wire/v2/sampling.ts), so a valid request never becomes a node-side bad_request.

export const temperatureSchema = z.number().min(0).max(2).openapi({ example: 0.7 });
export const topPSchema = z.number().gt(0).max(1).openapi({ example: 0.95 });
export const maxTokensSchema = z.int().min(1).max(MAX_COMPLETION_TOKENS).openapi({ example: 512 });
export const seedSchema = z
  .int()
  .min(0)
  .max(2 ** 32 - 1);
export const stopSchema = z.union([z.string().min(1).max(64), z.array(z.string().min(1).max(64)).max(8)]);

/**
 * Accepted; they change nothing about the answer (no tools, KV reuse is per conversation, one tier). `user` and
 * `safety_identifier` (which wins) name the end user that usage is reported under (`GET /v1/usage`).
 */
export const harmlessOpenAiFields = {
  user: z.string().max(256).optional(),
  safety_identifier: z.string().max(256).optional(),
  prompt_cache_key: z.string().max(256).optional(),
  service_tier: z.enum(["auto", "default"]).optional(),
  parallel_tool_calls: z.boolean().optional(),
};
