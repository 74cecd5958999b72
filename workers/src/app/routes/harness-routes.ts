import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import {
  MAX_HARNESS_DOCUMENT_BYTES,
  addressHarnessDocument,
  measureCanonicalBytes,
} from "../../../../schema/harness/harness-registry.ts";
import type { HarnessDocument } from "../../../../schema/harness/harness-document.ts";
import { ApiError } from "../../api/errors/api-error.ts";
import {
  createHarnessTooLargeError,
  createNotFoundError,
  formatParamPath,
} from "../../api/errors/request-errors.ts";
import {
  formatHarnessDiff,
  formatHarnessGuard,
  formatHarnessLabel,
  formatHarnessLabelMove,
  formatHarnessVersion,
  readLabelMoveSeq,
} from "../../api/format/format-harness.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import {
  createHarnessBodySchema,
  harnessDiffParamsSchema,
  harnessHashParamsSchema,
  harnessLabelParamsSchema,
  labelHistoryQuerySchema,
  listHarnessesQuerySchema,
  putHarnessLabelBodySchema,
} from "../../api/schemas/harness-schemas.ts";
import { diffJson, type JsonValue } from "../../harness-registry/diff-json.ts";
import type { HarnessOwner } from "../../harness-registry/harness-registry-store.ts";
import { DEFAULT_STEP_KINDS, TurnProgramError, resolveTurnProgram } from "../../steps/step-registry.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";
import {
  ADMIN_SECURITY,
  JSON_BODY_ERRORS,
  TENANT_SECURITY,
  errorResponse,
  errorResponses,
  jsonBody,
  jsonResponse,
} from "../route-contract.ts";
import { ADMIN_ERRORS } from "./admin-routes.ts";

/**
 * The harness registry: content-addressed versions (a tenant's own and the global ones, which the admin token
 * pushes), their diffs as JSON Patch, and a tenant's labels with their history. Reads need a valid key; pushes
 * and label moves the `admin` scope. Another tenant's version or label is a 404, as a missing one is.
 */

const security = TENANT_SECURITY;
const writeScope = { 403: errorResponse("The API key lacks the `admin` scope") };
const unknownHash = errorResponse("No version of this hash that the caller can see");
/** Writes are rate-limited on the tenant's writes bucket (admit-turn.ts). */
const writeErrors = { ...errorResponses(...JSON_BODY_ERRORS, 401, 429), ...writeScope };
const documentErrors = {
  413: errorResponse(
    `The body is larger than 1 MiB, or the document than ${MAX_HARNESS_DOCUMENT_BYTES} bytes of canonical JSON`,
  ),
};

/** 413 before the document's schema runs: size is the first thing a document can fail on. */
const limitHarnessDocument: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body: unknown = await c.req.json();
  const document =
    body !== null && typeof body === "object" ? (body as { document?: unknown }).document : undefined;
  if (document !== undefined) {
    const bytes = measureCanonicalBytes(document);
    if (bytes > MAX_HARNESS_DOCUMENT_BYTES)
      throw createHarnessTooLargeError(bytes, MAX_HARNESS_DOCUMENT_BYTES);
  }
  await next();
};

const writeScopeGuard = requireScope("admin");
const createBody = jsonBody(createHarnessBodySchema);
const createVersionRequest = (guard: MiddlewareHandler<AppEnv> | undefined) => ({
  ...createBody,
  middleware: [...(guard ? [guard] : []), ...createBody.middleware, limitHarnessDocument],
});
const putLabelBody = jsonBody(putHarnessLabelBodySchema, { params: harnessLabelParamsSchema });
const pushedDescription =
  "The version (new, or the one already stored with the same content: same hash, its first parent and message)";

const routes = {
  create: createRoute({
    method: "post",
    path: "/v1/harnesses",
    security,
    ...createVersionRequest(writeScopeGuard),
    description:
      "Stores a harness document as the tenant's own version; the same content is the same version (idempotent).",
    responses: {
      200: jsonResponse(pushedDescription),
      ...writeErrors,
      ...documentErrors,
      404: errorResponse("`parent` names no version the caller can see"),
    },
  }),
  createGlobal: createRoute({
    method: "post",
    path: "/v1/admin/harnesses",
    security: ADMIN_SECURITY,
    ...createVersionRequest(undefined),
    description: "Stores a global version, which every tenant sees.",
    responses: {
      200: jsonResponse(pushedDescription),
      ...errorResponses(...JSON_BODY_ERRORS),
      ...ADMIN_ERRORS,
      ...documentErrors,
      404: errorResponse("`parent` names no global version"),
    },
  }),
  list: createRoute({
    method: "get",
    path: "/v1/harnesses",
    security,
    request: { query: listHarnessesQuerySchema },
    responses: {
      200: jsonResponse("A page of the versions the tenant sees (its own and the global ones), newest first"),
      ...errorResponses(400, 401),
      404: errorResponse("`after` names no version the caller can see"),
    },
  }),
  retrieve: createRoute({
    method: "get",
    path: "/v1/harnesses/{hash}",
    security,
    request: { params: harnessHashParamsSchema },
    responses: {
      200: jsonResponse("The version with its document"),
      ...errorResponses(400, 401),
      404: unknownHash,
    },
  }),
  diff: createRoute({
    method: "get",
    path: "/v1/harnesses/{hash}/diff/{other}",
    security,
    request: { params: harnessDiffParamsSchema },
    responses: {
      200: jsonResponse("`patch`: the RFC 6902 JSON Patch that turns the first document into the second"),
      ...errorResponses(400, 401),
      404: unknownHash,
    },
  }),
  listLabels: createRoute({
    method: "get",
    path: "/v1/harness-labels",
    security,
    responses: { 200: jsonResponse("The tenant's labels, by name"), ...errorResponses(401) },
  }),
  retrieveLabel: createRoute({
    method: "get",
    path: "/v1/harness-labels/{name}",
    security,
    request: { params: harnessLabelParamsSchema },
    responses: {
      200: jsonResponse("The label: its version and canary"),
      ...errorResponses(400, 401),
      404: errorResponse("The tenant has no label of this name"),
    },
  }),
  putLabel: createRoute({
    method: "put",
    path: "/v1/harness-labels/{name}",
    security,
    ...putLabelBody,
    middleware: [writeScopeGuard, ...putLabelBody.middleware],
    description:
      "Points the label at a version, with an optional canary; the move is kept in the label's history and the audit log.",
    responses: {
      200: jsonResponse("The label as moved"),
      ...writeErrors,
      404: errorResponse("`harness` or `canary.harness` names no version the caller can see"),
    },
  }),
  labelGuard: createRoute({
    method: "get",
    path: "/v1/harness-labels/{name}/guard",
    security,
    request: { params: harnessLabelParamsSchema },
    description:
      "The rollout guard on the label's canary: the settings in force, both arms' turns and failures (in total and by category) and the rule's statistic now.",
    responses: {
      200: jsonResponse("The guard's state; `counts` and `statistic` are null while the label has no canary"),
      ...errorResponses(400, 401),
      404: errorResponse("The tenant has no label of this name"),
    },
  }),
  labelHistory: createRoute({
    method: "get",
    path: "/v1/harness-labels/{name}/history",
    security,
    request: { params: harnessLabelParamsSchema, query: labelHistoryQuerySchema },
    responses: {
      200: jsonResponse("A page of the label's moves (who, when, from, to, why), newest first"),
      ...errorResponses(400, 401),
      404: errorResponse("The tenant has no label of this name"),
    },
  }),
};

/** The step kinds a document names, and their options, against the edge's registry: a 400 naming the step. */
function checkTurnProgram(document: HarnessDocument): void {
  try {
    resolveTurnProgram(document, DEFAULT_STEP_KINDS);
  } catch (error) {
    if (!(error instanceof TurnProgramError)) throw error;
    const path = ["document", ...error.path.map((key) => (/^\d+$/.test(key) ? Number(key) : key))];
    throw new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_value",
      param: formatParamPath(path),
      message: error.message,
    });
  }
}

async function pushVersion(
  c: Context<AppEnv>,
  owner: HarnessOwner,
  actor: string,
  body: {
    document: HarnessDocument;
    parent?: string | null | undefined;
    message?: string | null | undefined;
  },
) {
  const { deps } = c.var;
  checkTurnProgram(body.document);
  const address = await addressHarnessDocument(body.document);
  if (address.bytes > MAX_HARNESS_DOCUMENT_BYTES)
    throw createHarnessTooLargeError(address.bytes, MAX_HARNESS_DOCUMENT_BYTES);
  const parent = body.parent ?? null;
  if (parent !== null && !(await deps.harnessRegistry.getVersion(owner, parent)))
    throw createNotFoundError("harness", parent, "parent");
  const createdAt = Math.floor(deps.now() / 1000);
  const { version } = await deps.harnessRegistry.putVersion(
    {
      owner,
      hash: address.hash,
      document: address.canonical,
      bytes: address.bytes,
      parent,
      message: body.message ?? null,
      createdBy: actor,
      createdAt,
    },
    owner === "global"
      ? undefined
      : {
          tenantId: owner.tenantId,
          actor,
          action: "harness.created",
          target: address.hash,
          details: { parent, message: body.message ?? null, bytes: address.bytes },
          createdAt,
        },
  );
  return formatHarnessVersion(version);
}

export function registerHarnessRoutes(app: OpenAPIHono<AppEnv>): void {
  const tenant = (c: Context<AppEnv>): HarnessOwner => ({ tenantId: c.var.tenantId });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    return c.json(await pushVersion(c, tenant(c), c.var.principal.keyId, body), 200);
  });

  app.openapi(routes.createGlobal, async (c) => {
    const body = c.req.valid("json");
    return c.json(await pushVersion(c, "global", "admin", body), 200);
  });

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid("query");
    const page = await c.var.deps.harnessRegistry.listVersions(tenant(c), query);
    if ("error" in page) throw createNotFoundError("harness", query.after ?? "", "after");
    return c.json(formatItemList(page.data.map(formatHarnessVersion), { hasMore: page.hasMore }), 200);
  });

  app.openapi(routes.retrieve, async (c) => {
    const { hash } = c.req.valid("param");
    const version = await c.var.deps.harnessRegistry.getVersion(tenant(c), hash);
    if (!version) throw createNotFoundError("harness", hash);
    return c.json(formatHarnessVersion(version), 200);
  });

  app.openapi(routes.diff, async (c) => {
    const { hash, other } = c.req.valid("param");
    const registry = c.var.deps.harnessRegistry;
    const [from, to] = await Promise.all([
      registry.getVersion(tenant(c), hash),
      registry.getVersion(tenant(c), other),
    ]);
    if (!from) throw createNotFoundError("harness", hash, "hash");
    if (!to) throw createNotFoundError("harness", other, "other");
    const patch = diffJson(JSON.parse(from.document) as JsonValue, JSON.parse(to.document) as JsonValue);
    return c.json(formatHarnessDiff(hash, other, patch), 200);
  });

  app.openapi(routes.listLabels, async (c) => {
    const labels = await c.var.deps.harnessRegistry.listLabels(c.var.tenantId);
    return c.json(formatItemList(labels.map(formatHarnessLabel), { hasMore: false }), 200);
  });

  app.openapi(routes.retrieveLabel, async (c) => {
    const { name } = c.req.valid("param");
    const label = await c.var.deps.harnessRegistry.getLabel(c.var.tenantId, name);
    if (!label) throw createNotFoundError("harness_label", name);
    return c.json(formatHarnessLabel(label), 200);
  });

  app.openapi(routes.putLabel, async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    const { deps, tenantId, principal } = c.var;
    const registry = deps.harnessRegistry;
    const canary = body.canary ?? null;
    const [production, canaryVersion] = await Promise.all([
      registry.getVersion(tenant(c), body.harness),
      canary ? registry.getVersion(tenant(c), canary.harness) : undefined,
    ]);
    if (!production) throw createNotFoundError("harness", body.harness, "harness");
    if (canary && !canaryVersion) throw createNotFoundError("harness", canary.harness, "canary.harness");
    const at = Math.floor(deps.now() / 1000);
    const reason = body.reason ?? null;
    const to = { harness: body.harness, canary };
    const guard = body.guard ?? null;
    const label = await registry.moveLabel({
      tenantId,
      name,
      to,
      guard,
      reason,
      actor: principal.keyId,
      at,
      audit: {
        tenantId,
        actor: principal.keyId,
        action: "harness_label.moved",
        target: name,
        details: { ...to, guard, reason },
        createdAt: at,
      },
    });
    return c.json(formatHarnessLabel(label), 200);
  });

  app.openapi(routes.labelGuard, async (c) => {
    const { name } = c.req.valid("param");
    const registry = c.var.deps.harnessRegistry;
    const label = await registry.getLabel(c.var.tenantId, name);
    if (!label) throw createNotFoundError("harness_label", name);
    const counts = label.canary
      ? await registry.readRolloutCounts(c.var.tenantId, name, label.canary.harness)
      : null;
    return c.json(formatHarnessGuard(label, counts), 200);
  });

  app.openapi(routes.labelHistory, async (c) => {
    const { name } = c.req.valid("param");
    const { after, ...rest } = c.req.valid("query");
    const afterSeq = after === undefined ? undefined : readLabelMoveSeq(after);
    const registry = c.var.deps.harnessRegistry;
    if (!(await registry.getLabel(c.var.tenantId, name))) throw createNotFoundError("harness_label", name);
    const page = await registry.listLabelHistory(c.var.tenantId, name, { ...rest, afterSeq });
    return c.json(formatItemList(page.data.map(formatHarnessLabelMove), { hasMore: page.hasMore }), 200);
  });
}
