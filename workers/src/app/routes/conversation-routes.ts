import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatConversation } from "../../api/format/format-conversation.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatStoredItem } from "../../api/format/format-conversation-item.ts";
import {
  conversationIdParamsSchema,
  createConversationBodySchema,
  listItemsQuerySchema,
  createItemsBodySchema,
  readItemText,
  updateConversationBodySchema,
} from "../../api/schemas/conversation-schemas.ts";
import { pathIdSchema } from "../../api/schemas/path-id.ts";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { readMaxUserMessageBytes } from "../../../../schema/harness/measure-view-room.ts";

import type { Context } from "hono";
import { HARNESS_PIN_KEY } from "../../conversation/conversation-rpc.ts";
import type { AppEnv } from "../app-deps.ts";
import { checkHarnessPin } from "../read-harness-pin.ts";
import { requireScope } from "../access-guards.ts";
import {
  JSON_BODY_ERRORS,
  TENANT_SECURITY,
  errorResponse,
  errorResponses,
  jsonBody,
  jsonResponse,
} from "../route-contract.ts";
import { requireConversation } from "./require-conversation.ts";

const itemParams = conversationIdParamsSchema.extend({ item_id: pathIdSchema("item_id", "msg_0123a") });

const security = TENANT_SECURITY;
const notFound = { 404: errorResponse("Unknown, deleted or another tenant's conversation") };
const read = { ...errorResponses(400, 401, 403), ...notFound };
/** Writes are rate-limited on the tenant's writes bucket (admit-turn.ts). */
const write = { ...errorResponses(...JSON_BODY_ERRORS, 401, 403, 429), ...notFound };

const harnessPinNotFound = errorResponse(
  "`metadata.mol_harness` (the conversation's harness pin) names no version or label the tenant sees",
);

const routes = {
  create: createRoute({
    method: "post",
    path: "/v1/conversations",
    security,
    ...jsonBody(createConversationBodySchema),
    responses: {
      200: jsonResponse("The conversation"),
      ...errorResponses(...JSON_BODY_ERRORS, 401, 403, 429),
      404: harnessPinNotFound,
    },
  }),
  list: createRoute({
    method: "get",
    path: "/v1/conversations",
    security,
    request: { query: listItemsQuerySchema },
    responses: {
      200: jsonResponse("A page of the tenant's conversations (implicit ones, of responses, are not listed)"),
      ...errorResponses(400, 401, 403),
      404: errorResponse("`after` names no conversation of the tenant"),
    },
  }),
  retrieve: createRoute({
    method: "get",
    path: "/v1/conversations/{id}",
    security,
    request: { params: conversationIdParamsSchema },
    responses: { 200: jsonResponse("The conversation"), ...read },
  }),
  update: createRoute({
    method: "post",
    path: "/v1/conversations/{id}",
    security,
    ...jsonBody(updateConversationBodySchema, { params: conversationIdParamsSchema }),
    responses: {
      200: jsonResponse("The conversation with its new metadata"),
      ...write,
      404: errorResponse(
        "Unknown, deleted or another tenant's conversation, or a `metadata.mol_harness` the tenant cannot see",
      ),
    },
  }),
  addItems: createRoute({
    method: "post",
    path: "/v1/conversations/{id}/items",
    security,
    ...jsonBody(createItemsBodySchema({ maxMessageBytes: readMaxUserMessageBytes(DEFAULT_HARNESS) }), {
      params: conversationIdParamsSchema,
    }),
    responses: { 200: jsonResponse("The added items; they open the next turn's views"), ...write },
  }),
  retrieveItem: createRoute({
    method: "get",
    path: "/v1/conversations/{id}/items/{item_id}",
    security,
    request: { params: itemParams },
    responses: { 200: jsonResponse("The item (a webhook's `answer_url`)"), ...read },
  }),
  deleteItem: createRoute({
    method: "delete",
    path: "/v1/conversations/{id}/items/{item_id}",
    security,
    request: { params: itemParams },
    responses: {
      200: jsonResponse("The conversation; the item is tombstoned"),
      ...errorResponses(400, 401, 403, 429),
      ...notFound,
    },
  }),
  listItems: createRoute({
    method: "get",
    path: "/v1/conversations/{id}/items",
    security,
    request: { params: conversationIdParamsSchema, query: listItemsQuerySchema },
    responses: { 200: jsonResponse("A page of items; assistant items carry `mol`"), ...read },
  }),
  delete: createRoute({
    method: "delete",
    path: "/v1/conversations/{id}",
    security,
    request: { params: conversationIdParamsSchema },
    responses: { 200: jsonResponse("Deleted"), ...errorResponses(400, 401, 403, 429), ...notFound },
  }),
};

/** A conversation's harness pin (`metadata.mol_harness`) must name a version or label the tenant sees. */
async function checkConversationPin(
  c: Context<AppEnv>,
  metadata: Readonly<Record<string, string>> | null | undefined,
): Promise<void> {
  const pin = metadata?.[HARNESS_PIN_KEY];
  if (pin !== undefined)
    await checkHarnessPin(c.var.deps.harnessRegistry, c.var.tenantId, pin, `metadata.${HARNESS_PIN_KEY}`);
}

/** `/v1/conversations`: create, read, update metadata, add, list, retrieve and delete items, delete. */
export function registerConversationRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/conversations/*", requireScope("conversations"));
  app.openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const { deps, tenantId } = c.var;
    await checkConversationPin(c, body.metadata);
    const id = deps.newId("conv");
    const meta = await deps
      .conversations(tenantId, id)
      .create({ id, tenantId, createdAt: Math.floor(deps.now() / 1000), metadata: body.metadata ?? {} });
    // Index after the object exists: a listed conversation must never 404.
    await deps.conversationIndex.add(meta);
    return c.json(formatConversation(meta), 200);
  });

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid("query");
    const page = await c.var.deps.conversationIndex.list(c.var.tenantId, query);
    if ("error" in page) throw createNotFoundError("conversation", query.after ?? "", "after");
    return c.json(formatItemList(page.data.map(formatConversation), { hasMore: page.hasMore }), 200);
  });

  app.openapi(routes.retrieve, async (c) => {
    const { meta } = await requireConversation(c);
    return c.json(formatConversation(meta), 200);
  });

  app.openapi(routes.update, async (c) => {
    const body = c.req.valid("json");
    const { handle, id } = await requireConversation(c);
    await checkConversationPin(c, body.metadata);
    const meta = await handle.updateMetadata(body.metadata);
    if (!meta) throw createNotFoundError("conversation", id);
    await c.var.deps.conversationIndex.updateMetadata?.(meta);
    return c.json(formatConversation(meta), 200);
  });

  app.openapi(routes.addItems, async (c) => {
    const body = c.req.valid("json");
    const { handle, id } = await requireConversation(c);
    const added = await handle.addItems(
      body.items.map((item) => ({ role: item.role, text: readItemText(item.content) })),
    );
    if (!added) throw createNotFoundError("conversation", id);
    return c.json(formatItemList(added.map(formatStoredItem), { hasMore: false }), 200);
  });

  app.openapi(routes.retrieveItem, async (c) => {
    const { handle } = await requireConversation(c);
    const itemId = c.req.valid("param").item_id;
    const item = await handle.readItem(itemId);
    if (!item) throw createNotFoundError("item", itemId);
    return c.json(formatStoredItem(item), 200);
  });

  /** A tombstone: the item leaves every list and read; the views (and KV) keep it, see timeline-event.ts. */
  app.openapi(routes.deleteItem, async (c) => {
    const { handle, meta } = await requireConversation(c);
    const itemId = c.req.valid("param").item_id;
    if (!(await handle.deleteItem(itemId))) throw createNotFoundError("item", itemId);
    return c.json(formatConversation(meta), 200);
  });

  app.openapi(routes.listItems, async (c) => {
    const query = c.req.valid("query");
    const { handle, id } = await requireConversation(c);
    const page = await handle.listItems(query);
    if (!page) throw createNotFoundError("conversation", id);
    const data = page.items.map(formatStoredItem);
    return c.json(formatItemList(data, { hasMore: page.hasMore }), 200);
  });

  app.openapi(routes.delete, async (c) => {
    const { handle, id } = await requireConversation(c);
    await c.var.deps.conversationIndex.remove(c.var.tenantId, id);
    await handle.remove();
    return c.json({ id, object: "conversation.deleted", deleted: true }, 200);
  });
}
