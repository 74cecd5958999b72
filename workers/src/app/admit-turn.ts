import type { Context } from "hono";
import { ApiError } from "../api/errors/api-error.ts";
import type { RateLimitHeaders } from "../limits/tenant-limits.ts";
import type { AppEnv } from "./app-deps.ts";

/**
 * Takes one request from the tenant's buckets before a turn starts, or answers 429: `rate_limit_exceeded` with
 * `retry-after(-ms)` (the official clients honour both), or `insufficient_quota` when the month's tokens are spent.
 * Runs after validation, so a rejected request never costs quota.
 */
export async function admitTurn(c: Context<AppEnv>): Promise<RateLimitHeaders> {
  const admission = await c.var.deps.limits(c.var.tenantId).admit();
  if (admission.ok) return admission.headers;
  const retry = {
    "retry-after": String(Math.max(1, Math.ceil(admission.retryAfterMs / 1000))),
    "retry-after-ms": String(admission.retryAfterMs),
  };
  if (admission.reason === "quota") {
    throw new ApiError({
      status: 429,
      type: "insufficient_quota",
      code: "insufficient_quota",
      message: "You exceeded your monthly token quota.",
      headers: { ...admission.headers, ...retry, "x-should-retry": "false" },
    });
  }
  throw new ApiError({
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    message: `Rate limit reached for ${admission.reason === "requests" ? "requests" : "tokens"} per minute.`,
    headers: { ...admission.headers, ...retry },
  });
}
