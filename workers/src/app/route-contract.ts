import { z, type OpenAPIHono, type OpenAPIHonoOptions } from "@hono/zod-openapi";
import { API_ERROR_TYPES } from "../api/errors/api-error.ts";
import { createValidationError } from "../api/errors/request-errors.ts";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-deps.ts";
import { MAX_BODY_BYTES, checkJsonBody } from "./read-json-body.ts";

// What every route declares in the OpenAPI document besides its own schemas: the error envelope, the statuses
// the shared middleware answers with, the security schemes. The routes are `createRoute` + `app.openapi`, so the
// document and the validation come from one definition.

/** The OpenAI error envelope of every 4xx and 5xx (a rejected GenUI component adds `status` and `report`). */
export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.enum(API_ERROR_TYPES),
      param: z.string().nullable(),
      code: z.string().nullable(),
    }),
  })
  .openapi("ErrorResponse");

/** The statuses shared middleware and validation answer with, in their usual words. */
const ERROR_DESCRIPTIONS = {
  400: "Invalid request: `param` names the first field that failed validation",
  401: "Missing or wrong API key",
  403: "The API key lacks this route's scope",
  404: "Not found",
  409: "Conflicts with what is stored",
  413: `The body is larger than ${MAX_BODY_BYTES} bytes`,
  415: "Content-Type is not application/json",
  422: "Well formed, but refused",
  429: "Rate limit (`retry-after`) or monthly token quota reached",
  499: "The turn was cancelled (the client closed the request)",
  502: "A GPU node failed or answered malformed",
  503: "No GPU node is available, or they are overloaded (`retry-after`)",
  504: "The GPU node did not answer before the deadline",
} as const;
export type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/** One error response: the envelope, described for this route. */
export function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: errorEnvelopeSchema } } };
}

/** Error responses with their usual descriptions; give a route's own words with {@link errorResponse}. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((status) => [status, errorResponse(ERROR_DESCRIPTIONS[status])]),
  ) as Record<S, ReturnType<typeof errorResponse>>;
}

/** What a JSON body can fail on before its schema: size, media type, UTF-8 and JSON syntax (400). */
export const JSON_BODY_ERRORS = [400, 413, 415] as const satisfies readonly ErrorStatus[];
/** What a turn can end in after admission: limits, and the hop's failures (wire errors, see api-error.ts). */
export const TURN_ERRORS = [429, 499, 502, 503, 504] as const satisfies readonly ErrorStatus[];

/**
 * A JSON object whose fields the handler's formatter defines (the OpenAI object named in the description).
 * Typed `unknown` so the formatters' own types (optional fields and all) need no JSON-value casting.
 */
export const formattedObjectSchema = z.unknown().openapi({ type: "object" });

/** One server-sent event of a streamed answer: its type (Responses) and its JSON, or `[DONE]` (Chat). */
export const serverSentEventSchema = z
  .object({ event: z.string().optional(), data: z.string() })
  .openapi("ServerSentEvent");

/** A JSON answer, or its server-sent events when the request asked for `stream`. */
export function jsonOrEventStreamResponse(description: string) {
  return {
    description,
    content: {
      "application/json": { schema: formattedObjectSchema },
      "text/event-stream": { schema: serverSentEventSchema },
    },
  };
}

export function jsonResponse(description: string) {
  return { description, content: { "application/json": { schema: formattedObjectSchema } } };
}

/**
 * A route's JSON body, spread into its `createRoute`: `schema` validates it (and documents it) once
 * `checkJsonBody` has checked media type, size and syntax; `request` holds the route's other parameters.
 * `optional`: no body at all reads as `{}`.
 */
export function jsonBody<S extends z.ZodType, R extends object = object>(
  schema: S,
  request: R = {} as R,
  options: { optional?: boolean } = {},
) {
  return {
    middleware: [checkJsonBody(options)] as [MiddlewareHandler<AppEnv>],
    request: {
      ...request,
      body: { content: { "application/json": { schema } }, required: options.optional !== true },
    },
  };
}

export const TENANT_SECURITY = [{ bearer: [] }];
export const ADMIN_SECURITY = [{ adminToken: [] }];

export function registerSecuritySchemes(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The operator's MOL_ADMIN_TOKEN; tenant API keys are refused.",
  });
}

/** Validation failures (path, query, body) as the OpenAI envelope, `param` naming the first failing field. */
export const answerValidationFailure: NonNullable<OpenAPIHonoOptions<AppEnv>["defaultHook"]> = (result) => {
  if (!result.success) throw createValidationError(result.error.issues);
};
