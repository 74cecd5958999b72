import { z } from "@hono/zod-openapi";
import { createModelNotFoundError } from "../errors/request-errors.ts";

/** The model name that routes every turn; `mol:<label>` pins a specialist. */
export const ROUTED_MODEL = "mol";

/** Any name is syntactically fine: an unknown one is a 404 `model_not_found`, as OpenAI answers it. */
export const modelNameSchema = z.string().min(1).max(64).openapi({
  description: '"mol" routes each turn to a specialist; "mol:<label>" forces one (see GET /v1/models).',
  example: ROUTED_MODEL,
});

export type ModelChoice = { kind: "routed" } | { kind: "forced"; label: string };

/** Throws a 404 ApiError for anything but `mol` or `mol:<label>` with a served label. */
export function resolveModel(model: string, labels: readonly string[]): ModelChoice {
  if (model === ROUTED_MODEL) return { kind: "routed" };
  const prefix = `${ROUTED_MODEL}:`;
  if (model.startsWith(prefix)) {
    const label = model.slice(prefix.length);
    if (labels.includes(label)) return { kind: "forced", label };
  }
  throw createModelNotFoundError(model);
}
