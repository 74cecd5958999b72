import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../api/errors/api-error.ts";
import type { Admission, RateLimitHeaders } from "../limits/tenant-limits.ts";
import type { AppEnv } from "./app-deps.ts";

/**
 * Takes one request from the tenant's buckets before a turn starts, or answers 429: `rate_limit_exceeded` with
 * `retry-after(-ms)` (the official clients honour both), or `insufficient_quota` when the month's tokens are spent.
 * Runs after validation, so a rejected request never costs quota.
 */
export async function admitTurn(c: Context<AppEnv>): Promise<RateLimitHeaders> {
  const admission = await c.var.stages.time("limiter", () => c.var.deps.limits(c.var.tenantId).admit());
  if (admission.ok) return admission.headers;
  throw toRateLimitError(admission);
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/**
 * Resources whose writes start no turn (the harness registry among them, and a response's feedback);
 * /v1/responses and /v1/chat/completions are admitted as turns.
 */
const WRITE_LIMITED =
  /^\/v1\/(conversations|webhook_endpoints|harnesses|harness-labels)(\/|$)|^\/v1\/responses\/[^/]+\/feedback$/;

/**
 * Rate-limits the writes that start no turn (conversations, webhook endpoints, feedback) on the tenant's writes bucket,
 * with a turn's headers and 429s. A write the API then refuses as bad input (4xx) is given back: like a refused
 * turn, it stored nothing, so it costs nothing.
 */
export const limitWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!WRITE_METHODS.has(c.req.method) || !WRITE_LIMITED.test(c.req.path)) return next();
  const limiter = c.var.deps.limits(c.var.tenantId);
  const admission = await limiter.admitWrite();
  if (!admission.ok) throw toRateLimitError(admission);
  await next();
  if (c.res.status >= 400 && c.res.status < 500) {
    await limiter.refundWrite();
    return;
  }
  for (const [name, value] of Object.entries(admission.headers)) c.res.headers.set(name, value);
};

function toRateLimitError(admission: Extract<Admission, { ok: false }>): ApiError {
  const retry = {
    "retry-after": String(Math.max(1, Math.ceil(admission.retryAfterMs / 1000))),
    "retry-after-ms": String(admission.retryAfterMs),
  };
  if (admission.reason === "quota") {
    return new ApiError({
      status: 429,
      type: "insufficient_quota",
      code: "insufficient_quota",
      message: "You exceeded your monthly token quota.",
      headers: { ...admission.headers, ...retry, "x-should-retry": "false" },
    });
  }
  return new ApiError({
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    message: `Rate limit reached for ${admission.reason === "requests" ? "requests" : "tokens"} per minute.`,
    headers: { ...admission.headers, ...retry },
  });
}
