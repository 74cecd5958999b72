import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { ApiError, toErrorEnvelope } from "../../api/errors/api-error.ts";
import {
  createInvalidJsonError,
  createNotFoundError,
  createValidationError,
} from "../../api/errors/request-errors.ts";
import { GENUI_FRAME_RUNTIME_JS, GENUI_FRAME_RUNTIME_VERSION } from "../../genui/frame-bundle.generated.ts";
import { checkRenderToken, type GenuiComponent } from "../../genui/genui-component-store.ts";
import { storeValidComponent } from "../../genui/store-component.ts";
import { renderFrameDocument, renderHostPage } from "../../genui/render-pages.ts";
import { validateComponent, type GenuiValidationReport } from "../../genui/validate-component.ts";
import { pathIdSchema } from "../../api/schemas/path-id.ts";
import { requireScope } from "../access-guards.ts";
import { renderPlaygroundPage } from "../playground-page.ts";
import type { AppEnv } from "../app-deps.ts";
import { MAX_BODY_BYTES, readLimitedBody } from "../read-json-body.ts";
import {
  TENANT_SECURITY,
  errorEnvelopeSchema,
  errorResponse,
  errorResponses,
  jsonResponse,
} from "../route-contract.ts";

/**
 * GenUI components: `POST /v1/genui/components` validates and stores one (422 with the report when rejected),
 * `GET /playground/render/{id}?t=` (API origin) is its host page, `GET /playground` the chat page around them, and the sandbox origin serves only the frame
 * document and the frame runtime. Error codes added here: `genui_component_rejected` (422),
 * `genui_sandbox_unconfigured` (503).
 */

/** The local sandbox host: Chromium and curl resolve any `*.localhost` name to loopback, so no DNS is needed. */
export const LOCAL_SANDBOX_HOSTNAME = "genui-sandbox.localhost";
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", LOCAL_SANDBOX_HOSTNAME]);

/**
 * The sandbox origin: MOL_GENUI_SANDBOX_ORIGIN, or on a loopback API (the local mesh, the tests)
 * `http://genui-sandbox.localhost:PORT` — another origin and another site on the same wrangler port, so one server.
 */
export function resolveSandboxOrigin(configured: string | undefined, requestUrl: URL): string | undefined {
  if (configured) return new URL(configured).origin;
  if (!LOOPBACK_HOSTS.has(requestUrl.hostname) || !requestUrl.port) return undefined;
  return `${requestUrl.protocol}//${LOCAL_SANDBOX_HOSTNAME}:${requestUrl.port}`;
}

const isSandboxPath = (path: string) => path.startsWith("/genui/");

/**
 * Keeps the two origins apart: the sandbox host answers only /genui/* (frame document, runtime), and the API host
 * never serves component code. Registered before authentication, so no /v1 route is reachable on the sandbox host.
 */
export const genuiOriginGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = new URL(c.req.url);
  const sandbox = resolveSandboxOrigin(c.var.deps.genuiSandboxOrigin, url);
  const onSandbox = sandbox !== undefined && url.origin === sandbox;
  if (onSandbox !== isSandboxPath(url.pathname))
    return c.text("Not found", 404, { "cache-control": "no-store", "x-content-type-options": "nosniff" });
  await next();
};

const createBodySchema = z
  .strictObject({
    source: z.string().openapi({ description: "One JSX/TSX ES module, at most 64 KiB of UTF-8" }),
  })
  .openapi("GenuiComponentCreate");
const rejectedSchema = errorEnvelopeSchema
  .extend({
    status: z.literal("rejected"),
    report: z.unknown().openapi({ type: "object", description: "The findings: rule, message, line, column" }),
  })
  .openapi("GenuiComponentRejected");
const scope = { 403: errorResponse("The API key lacks the `responses` scope") };

const routes = {
  create: createRoute({
    method: "post",
    path: "/v1/genui/components",
    security: TENANT_SECURITY,
    request: {
      // The JSON schema by reference, not as zod: the handler reads the body itself (raw source or JSON), so the
      // route's validator must not; the reference is the handler's own schema, registered below.
      body: {
        content: {
          "application/json": { schema: { $ref: "#/components/schemas/GenuiComponentCreate" } },
          "text/jsx": { schema: z.string() },
          "text/tsx": { schema: z.string() },
        },
        required: true,
      },
    },
    responses: {
      200: jsonResponse(
        "Valid and stored: `{id, status: valid, report, render_url}`; render_url opens without a key, 1 h",
      ),
      ...errorResponses(400, 401, 413),
      ...scope,
      415: errorResponse("Neither application/json nor the source as text/jsx or text/tsx"),
      422: {
        description: "Rejected: the error envelope plus `status: rejected` and the `report`",
        content: { "application/json": { schema: rejectedSchema } },
      },
      503: errorResponse("No sandbox origin is configured (MOL_GENUI_SANDBOX_ORIGIN)"),
    },
  }),
  retrieve: createRoute({
    method: "get",
    path: "/v1/genui/components/{id}",
    security: TENANT_SECURITY,
    request: { params: z.object({ id: pathIdSchema("id", "gc_0123") }) },
    responses: {
      200: jsonResponse("The component and its validation report"),
      ...errorResponses(400, 401),
      ...scope,
      404: errorResponse("Unknown component of this tenant"),
    },
  }),
};
const RAW_TYPES = /^(text\/(jsx|tsx|plain|javascript|typescript)|application\/(javascript|typescript))\b/i;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The source as sent: raw bytes for a `text/jsx` (etc.) body, else the `source` of a JSON body. */
async function readSource(c: Context<AppEnv>): Promise<Uint8Array | string> {
  const contentType = c.req.header("content-type") ?? "";
  const bytes = await readLimitedBody(c.req.raw.body, MAX_BODY_BYTES);
  if (RAW_TYPES.test(contentType)) return bytes;
  if (!/^application\/json\b/i.test(contentType))
    throw new ApiError({
      status: 415,
      type: "invalid_request_error",
      code: "unsupported_media_type",
      message: "Send application/json {source} or the source itself as text/jsx or text/tsx.",
    });
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    // Not UTF-8: the validator's report says so, with the same 422 as any rejected component.
    return bytes;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw createInvalidJsonError();
  }
  const parsed = createBodySchema.safeParse(value);
  if (!parsed.success) throw createValidationError(parsed.error.issues);
  return parsed.data.source;
}

function rejectedResponse(c: Context<AppEnv>, report: GenuiValidationReport) {
  const first = report.findings[0];
  const error = new ApiError({
    status: 422,
    type: "invalid_request_error",
    code: "genui_component_rejected",
    param: "source",
    message: `The component was rejected (${report.findings.length} finding(s))${
      first ? `; first: ${first.rule} at ${first.line}:${first.column}: ${first.message}` : ""
    }`,
  });
  return c.json({ ...toErrorEnvelope(error), status: "rejected" as const, report }, 422);
}

function requireSandbox(c: Context<AppEnv>): string {
  const sandbox = resolveSandboxOrigin(c.var.deps.genuiSandboxOrigin, new URL(c.req.url));
  if (sandbox) return sandbox;
  throw new ApiError({
    status: 503,
    type: "server_error",
    code: "genui_sandbox_unconfigured",
    message: "No sandbox origin is configured (MOL_GENUI_SANDBOX_ORIGIN); components cannot be rendered.",
  });
}

const formatComponent = (component: GenuiComponent) => ({
  id: component.id,
  object: "genui.component",
  status: component.report.status,
  report: component.report,
  created_at: component.createdAt,
});

/** A component the capability token opens, or undefined (missing, wrong token, expired: all look the same). */
async function openByToken(c: Context<AppEnv>): Promise<GenuiComponent | undefined> {
  const component = await c.var.deps.genuiComponents.getForRender(c.req.param("id") ?? "");
  const token = c.req.query("t") ?? "";
  const now = Math.floor(c.var.deps.now() / 1000);
  return component && (await checkRenderToken(component, token, now)) ? component : undefined;
}

const notFoundPage = (c: Context<AppEnv>) =>
  c.text("This render link is unknown or has expired.", 404, {
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'",
  });

export function registerGenuiRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/genui/*", requireScope("responses"));
  app.openAPIRegistry.register("GenuiComponentCreate", createBodySchema);

  app.openapi(routes.create, async (c) => {
    const source = await readSource(c);
    const { report, compiled } = validateComponent(source);
    if (report.status === "rejected" || compiled === undefined) return rejectedResponse(c, report);
    const sandbox = requireSandbox(c);
    const { deps, tenantId } = c.var;
    const { component, renderUrl } = await storeValidComponent(deps.genuiComponents, {
      id: deps.newId("gc"),
      tenantId,
      source: typeof source === "string" ? source : utf8.decode(source),
      compiled,
      report,
      apiOrigin: new URL(c.req.url).origin,
      nowSeconds: Math.floor(deps.now() / 1000),
    });
    return c.json(
      {
        ...formatComponent(component),
        render_url: renderUrl,
        render_url_expires_at: component.renderTokenExpiresAt,
        sandbox_origin: sandbox,
      },
      200,
    );
  });

  app.openapi(routes.retrieve, async (c) => {
    const { id } = c.req.valid("param");
    const component = await c.var.deps.genuiComponents.get(c.var.tenantId, id);
    if (!component) throw createNotFoundError("genui_component", id);
    return c.json(formatComponent(component), 200);
  });

  app.get("/playground", (c) => {
    const page = renderPlaygroundPage(crypto.randomUUID().replace(/-/g, ""));
    return c.body(page.body, 200, page.headers);
  });

  app.get("/playground/render/:id", async (c) => {
    const component = await openByToken(c);
    if (!component) return notFoundPage(c);
    const sandbox = requireSandbox(c);
    const watchdog = Number(c.req.query("watchdog_ms") ?? "3000");
    const page = renderHostPage({
      id: component.id,
      frameUrl: `${sandbox}/genui/frame/${component.id}?t=${encodeURIComponent(c.req.query("t") ?? "")}`,
      sandboxOrigin: sandbox,
      watchdogMs: Number.isFinite(watchdog) ? Math.min(Math.max(watchdog, 1000), 30_000) : 3000,
      nonce: crypto.randomUUID().replace(/-/g, ""),
    });
    return c.body(page.body, 200, page.headers);
  });

  app.get("/genui/frame/:id", async (c) => {
    const component = await openByToken(c);
    if (!component) return notFoundPage(c);
    const page = renderFrameDocument({
      id: component.id,
      compiled: component.compiled,
      hostOrigin: component.hostOrigin,
      sandboxOrigin: requireSandbox(c),
      runtimeVersion: GENUI_FRAME_RUNTIME_VERSION,
    });
    return c.body(page.body, 200, page.headers);
  });

  app.get("/genui/runtime.js", (c) =>
    c.body(GENUI_FRAME_RUNTIME_JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    }),
  );
}
