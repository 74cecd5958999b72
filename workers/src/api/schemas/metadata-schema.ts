import { z } from "@hono/zod-openapi";

export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY_CHARS = 64;
export const MAX_METADATA_VALUE_CHARS = 512;

/** JSON Schema 2020-12's `propertyNames`, which zod-to-openapi's metadata type does not list. */
const KEY_NAMES: object = { propertyNames: { minLength: 1, maxLength: MAX_METADATA_KEY_CHARS } };

/** OpenAI's metadata limits, so a client that fits there fits here. */
export const metadataSchema = z
  .record(z.string().min(1).max(MAX_METADATA_KEY_CHARS), z.string().max(MAX_METADATA_VALUE_CHARS))
  .refine((pairs) => Object.keys(pairs).length <= MAX_METADATA_PAIRS, {
    message: `metadata holds at most ${MAX_METADATA_PAIRS} pairs`,
  })
  .openapi("Metadata", {
    // What the refinement and the key schema hold, in JSON Schema terms (zod-to-openapi emits neither).
    maxProperties: MAX_METADATA_PAIRS,
    ...KEY_NAMES,
    description: `Up to ${MAX_METADATA_PAIRS} string pairs; keys ≤ ${MAX_METADATA_KEY_CHARS} chars, values ≤ ${MAX_METADATA_VALUE_CHARS}.`,
    example: { project: "demo" },
  });
export type Metadata = z.infer<typeof metadataSchema>;
