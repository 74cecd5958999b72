import type { MiddlewareHandler } from "hono";
import { createInsufficientScopeError } from "../api/errors/request-errors.ts";
import type { ApiKeyScope } from "../tenancy/api-key-scope.ts";
import type { AppEnv } from "./app-deps.ts";

/** Refuses, with 403, a key that was authenticated but not granted `scope`. */
export function requireScope(scope: ApiKeyScope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.var.principal.scopes.includes(scope)) throw createInsufficientScopeError(scope);
    await next();
  };
}
