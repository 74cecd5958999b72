import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { ApiError, toApiError, toErrorResponse } from "../api/errors/api-error.ts";
import {
  createMethodNotAllowedError,
  createUnauthorizedError,
  createUnsupportedMediaTypeError,
} from "../api/errors/request-errors.ts";
import { readBearerToken } from "./access-guards.ts";
import type { AppDeps, AppEnv } from "./app-deps.ts";
import { registerChatCompletionRoutes } from "./routes/chat-completion-routes.ts";
import { registerConversationRoutes } from "./routes/conversation-routes.ts";
import { registerHealthRoutes, registerModelRoutes } from "./routes/health-routes.ts";
import { registerResponseRoutes } from "./routes/response-routes.ts";
import { registerAdminRoutes } from "./routes/admin-routes.ts";
import { registerAuditLogRoutes } from "./routes/audit-log-routes.ts";
import { registerUsageRoutes } from "./routes/usage-routes.ts";
import { registerInboundHookRoutes } from "./routes/inbound-hook-routes.ts";
import { registerWebhookEndpointRoutes } from "./routes/webhook-endpoint-routes.ts";
import { genuiOriginGuard, registerGenuiRoutes } from "./routes/genui-routes.ts";
import { registerHarnessRoutes } from "./routes/harness-routes.ts";
import { observeRequests } from "./observe-request.ts";
import { limitWrites } from "./admit-turn.ts";
import type { HopTraceContext } from "../../../schema/wire/v2/index.ts";
import { answerValidationFailure, registerSecuritySchemes } from "./route-contract.ts";
import { readAllowedMethods } from "./method-not-allowed.ts";

/**
 * The public API (OpenAI-compatible, under /v1). Runtime-agnostic: the adapter passes `resolveDeps`, which turns
 * the runtime's bindings into {@link AppDeps} per request; `trace` is the request's id and W3C trace context, for
 * whatever the deps send on (turn requests to a conversation, and so hops to a node). Each route is a
 * `createRoute` definition: its zod schemas validate the request and are `GET /openapi.json`, one source.
 */
export function createApp(
  resolveDeps: (env: unknown, request: { trace: HopTraceContext; raw: Request }) => AppDeps,
): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: answerValidationFailure });
  registerSecuritySchemes(app);

  app.use("*", observeRequests(resolveDeps));
  app.use("*", genuiOriginGuard);

  app.use("/v1/*", async (c, next) => {
    // The admin API authenticates with the operator's token instead (access-guards.ts).
    // Inbound webhooks authenticate with their signature (inbound-hook-routes.ts).
    if (c.req.path.startsWith("/v1/admin/") || c.req.path.startsWith("/v1/hooks/")) return next();
    const token = readBearerToken(c.req.header("authorization"));
    const principal =
      token === undefined ? undefined : await c.var.stages.time("auth", () => c.var.deps.authenticate(token));
    if (!principal) throw createUnauthorizedError();
    c.set("tenantId", principal.tenantId);
    c.set("principal", principal);
    await next();
  });
  // One registration: in Hono `/x/*` also matches `/x`, so listing both would count a write twice.
  app.use("/v1/*", limitWrites);

  registerHealthRoutes(app);
  registerModelRoutes(app);
  registerConversationRoutes(app);
  registerResponseRoutes(app);
  registerChatCompletionRoutes(app);
  registerAdminRoutes(app);
  registerAuditLogRoutes(app);
  registerUsageRoutes(app);
  registerWebhookEndpointRoutes(app);
  registerInboundHookRoutes(app);
  registerGenuiRoutes(app);
  registerHarnessRoutes(app);

  app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "molmesh", version: "1.0.0" } });

  // A path the API serves with another method is a 405 that says which (schemathesis' `unsupported_method`).
  app.notFound((c) => {
    const allowed = readAllowedMethods(app, c.req.path);
    const error =
      allowed.length > 0
        ? createMethodNotAllowedError(c.req.method, c.req.path, allowed)
        : new ApiError({
            status: 404,
            type: "not_found_error",
            code: "not_found",
            message: `no route for ${c.req.method} ${c.req.path}`,
          });
    return toErrorResponse(error, { "x-request-id": c.var.requestId });
  });
  app.onError((error, c) => {
    const apiError =
      error instanceof HTTPException && !(error instanceof ApiError)
        ? fromHttpException(error, c.req.header("content-type") ?? null)
        : toApiError(error);
    return toErrorResponse(apiError, { "x-request-id": c.var.requestId });
  });
  return app;
}

/**
 * Hono's own refusals in the OpenAI envelope. The routes' checks run first (read-json-body.ts), so these are the
 * corner cases where the library is stricter, e.g. a media-type parameter its gate does not parse.
 */
function fromHttpException(error: HTTPException, contentType: string | null): ApiError {
  if (error.status === 415) return createUnsupportedMediaTypeError(contentType);
  return new ApiError({
    status: error.status,
    type: "invalid_request_error",
    code: "bad_request",
    message: error.message,
  });
}
