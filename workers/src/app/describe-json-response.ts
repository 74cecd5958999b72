import { z } from "@hono/zod-openapi";

/** An OpenAPI response described in words: the handlers' JSON bodies are documented by example, not by schema. */
export function describeJsonResponse(description: string) {
  return { description, content: { "application/json": { schema: z.object({}).passthrough() } } };
}
