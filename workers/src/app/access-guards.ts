import type { MiddlewareHandler } from "hono";
import {
  createAdminApiDisabledError,
  createAdminTokenRequiredError,
  createInsufficientScopeError,
  createInvalidAdminTokenError,
} from "../api/errors/request-errors.ts";
import { sha256Hex, timingSafeEqualText } from "../../../schema/harness/content-hash.ts";
import type { ApiKeyScope } from "../tenancy/api-key-scope.ts";
import type { AppEnv } from "./app-deps.ts";

/**
 * Guards the admin API with the operator's token (MOL_ADMIN_TOKEN): 401 for a missing or wrong token, 403 for
 * a valid tenant key (it is known, just not allowed) or when no admin token is configured.
 */
export const requireAdminToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { adminToken } = c.var.deps;
  if (!adminToken) throw createAdminApiDisabledError();
  const token = readBearerToken(c.req.header("authorization"));
  if (token === undefined) throw createInvalidAdminTokenError();
  // Digests have one length, so timing reveals neither the token's length nor how much of it matched.
  if (!timingSafeEqualText(await sha256Hex(token), await sha256Hex(adminToken))) {
    if (await c.var.deps.authenticate(token)) throw createAdminTokenRequiredError();
    throw createInvalidAdminTokenError();
  }
  await next();
};

/** Refuses, with 403, a key that was authenticated but not granted `scope`. */
export function requireScope(scope: ApiKeyScope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.var.principal.scopes.includes(scope)) throw createInsufficientScopeError(scope);
    await next();
  };
}

/** The token of an `Authorization: Bearer <token>` header value, or undefined. */
export function readBearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
}
