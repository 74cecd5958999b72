import type { Context } from "hono";
import { canonicalizeJson, sha256Hex } from "../../../schema/harness/content-hash.ts";
import { ApiError } from "../api/errors/api-error.ts";

const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** The `Idempotency-Key` header of a turn-creating request, validated; undefined when absent. */
export function readIdempotencyKey(c: Context): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_idempotency_key",
      param: "Idempotency-Key",
      message: `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII characters`,
    });
  }
  return key;
}

/** SHA-256 of a request body in canonical JSON, for Idempotency-Key comparisons. */
export async function hashRequestBody(body: unknown): Promise<string> {
  return sha256Hex(canonicalizeJson(body));
}
