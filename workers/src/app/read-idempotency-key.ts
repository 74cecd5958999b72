import { z } from "@hono/zod-openapi";
import { canonicalizeJson, sha256Hex } from "../../../schema/harness/content-hash.ts";

const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** The `Idempotency-Key` header of a turn-creating request (validated with the route's other parameters). */
export const idempotencyKeyHeadersSchema = z.object({
  "idempotency-key": z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, {
      message: `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII characters`,
    })
    .optional()
    .openapi({
      param: { name: "idempotency-key", in: "header" },
      description:
        "A retry with the same key and body replays the stored result (409 while the first is still running; 422 with another body).",
      example: "order-1234-attempt",
    }),
});

/** SHA-256 of a request body in canonical JSON, for Idempotency-Key comparisons. */
export async function hashRequestBody(body: unknown): Promise<string> {
  return sha256Hex(canonicalizeJson(body));
}
