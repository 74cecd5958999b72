import type { MiddlewareHandler } from "hono";
import {
  createAdminApiDisabledError,
  createAdminTokenRequiredError,
  createInvalidAdminTokenError,
} from "../api/errors/request-errors.ts";
import { sha256Hex } from "../lib/sha256-hex.ts";
import { timingSafeEqualText } from "../lib/timing-safe-equal-text.ts";
import type { AppEnv } from "./app-deps.ts";
import { readBearerToken } from "./read-bearer-token.ts";

/**
 * Guards the admin API with the operator's token (MOL_ADMIN_TOKEN): 401 for a missing or wrong token, 403 for
 * a valid tenant key (it is known, just not allowed) or when no admin token is configured.
 */
export const requireAdminToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { adminToken } = c.var.deps;
  if (!adminToken) throw createAdminApiDisabledError();
  const token = readBearerToken(c);
  if (token === undefined) throw createInvalidAdminTokenError();
  // Digests have one length, so timing reveals neither the token's length nor how much of it matched.
  if (!timingSafeEqualText(await sha256Hex(token), await sha256Hex(adminToken))) {
    if (await c.var.deps.authenticate(token)) throw createAdminTokenRequiredError();
    throw createInvalidAdminTokenError();
  }
  await next();
};
