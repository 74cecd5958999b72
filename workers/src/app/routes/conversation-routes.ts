import type { OpenAPIHono } from "@hono/zod-openapi";
import { createValidationError, createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatConversation } from "../../api/format/format-conversation.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatStoredItem } from "../../api/format/format-conversation-item.ts";
import {
  createConversationBodySchema,
  listItemsQuerySchema,
  createItemsBodySchema,
  readItemText,
  updateConversationBodySchema,
} from "../../api/schemas/conversation-schemas.ts";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { readMaxUserMessageBytes } from "../../../../schema/harness/measure-view-room.ts";

import type { AppEnv } from "../app-deps.ts";
import { readJsonBody } from "../read-json-body.ts";
import { requireScope } from "../access-guards.ts";
import { requireConversation } from "./require-conversation.ts";

const itemsBodySchema = createItemsBodySchema({ maxMessageBytes: readMaxUserMessageBytes(DEFAULT_HARNESS) });

/** `/v1/conversations`: create, read, update metadata, add, list, retrieve and delete items, delete. */
export function registerConversationRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/conversations/*", requireScope("conversations"));
  app.post("/v1/conversations", async (c) => {
    const body = await readJsonBody(c, createConversationBodySchema);
    const { deps, tenantId } = c.var;
    const id = deps.newId("conv");
    const meta = await deps
      .conversations(tenantId, id)
      .create({ id, tenantId, createdAt: Math.floor(deps.now() / 1000), metadata: body.metadata ?? {} });
    // Index after the object exists: a listed conversation must never 404.
    await deps.conversationIndex.add(meta);
    return c.json(formatConversation(meta));
  });

  app.get("/v1/conversations", async (c) => {
    const query = listItemsQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const page = await c.var.deps.conversationIndex.list(c.var.tenantId, query.data);
    if ("error" in page) throw createNotFoundError("conversation", query.data.after ?? "", "after");
    return c.json(formatItemList(page.data.map(formatConversation), { hasMore: page.hasMore }));
  });

  app.get("/v1/conversations/:id", async (c) => {
    const { meta } = await requireConversation(c);
    return c.json(formatConversation(meta));
  });

  app.post("/v1/conversations/:id", async (c) => {
    const body = await readJsonBody(c, updateConversationBodySchema);
    const { handle, id } = await requireConversation(c);
    const meta = await handle.updateMetadata(body.metadata);
    if (!meta) throw createNotFoundError("conversation", id);
    await c.var.deps.conversationIndex.updateMetadata?.(meta);
    return c.json(formatConversation(meta));
  });

  app.post("/v1/conversations/:id/items", async (c) => {
    const body = await readJsonBody(c, itemsBodySchema);
    const { handle, id } = await requireConversation(c);
    const added = await handle.addItems(
      body.items.map((item) => ({ role: item.role, text: readItemText(item.content) })),
    );
    if (!added) throw createNotFoundError("conversation", id);
    return c.json(formatItemList(added.map(formatStoredItem), { hasMore: false }));
  });

  app.get("/v1/conversations/:id/items/:item_id", async (c) => {
    const { handle } = await requireConversation(c);
    const itemId = c.req.param("item_id");
    const item = await handle.readItem(itemId);
    if (!item) throw createNotFoundError("item", itemId);
    return c.json(formatStoredItem(item));
  });

  /** A tombstone: the item leaves every list and read; the views (and KV) keep it, see timeline-event.ts. */
  app.delete("/v1/conversations/:id/items/:item_id", async (c) => {
    const { handle, meta } = await requireConversation(c);
    const itemId = c.req.param("item_id");
    if (!(await handle.deleteItem(itemId))) throw createNotFoundError("item", itemId);
    return c.json(formatConversation(meta));
  });

  app.get("/v1/conversations/:id/items", async (c) => {
    const query = listItemsQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const { handle, id } = await requireConversation(c);
    const page = await handle.listItems(query.data);
    if (!page) throw createNotFoundError("conversation", id);
    const data = page.items.map(formatStoredItem);
    return c.json(formatItemList(data, { hasMore: page.hasMore }));
  });

  app.delete("/v1/conversations/:id", async (c) => {
    const { handle, id } = await requireConversation(c);
    await c.var.deps.conversationIndex.remove(c.var.tenantId, id);
    await handle.remove();
    return c.json({ id, object: "conversation.deleted", deleted: true });
  });
}
