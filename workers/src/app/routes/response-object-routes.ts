import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../api/errors/api-error.ts";
import { createNotFoundError, createValidationError } from "../../api/errors/request-errors.ts";
import { formatContextItem, formatTurnInputItems } from "../../api/format/format-conversation-item.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatResponseObject } from "../../api/format/format-response-object.ts";
import { pageQueryFields } from "../../api/schemas/page-query-fields.ts";
import { createResponsesEventStream } from "../../api/sse/create-responses-event-stream.ts";
import type { ConversationHandle, StoredTurn } from "../../conversation/conversation-rpc.ts";
import { buildContextItemId, parseResponseId } from "../../conversation/item-id.ts";
import { readPartStream } from "../../lib/create-part-stream.ts";
import type { AppEnv } from "../app-deps.ts";
import { SSE_HEADERS } from "../serve-turn.ts";

/** `GET /v1/responses/{id}`: `stream=true` replays the events (after `starting_after`), then goes live. */
export const retrieveResponseQuerySchema = z
  .object({
    stream: z.enum(["true", "false"]).optional(),
    starting_after: z.coerce.number().int().min(-1).optional(),
    include: z.unknown().optional(),
    include_obfuscation: z.unknown().optional(),
  })
  .openapi("RetrieveResponseQuery");

export const inputItemsQuerySchema = z.object({ ...pageQueryFields }).openapi("ListInputItemsQuery");

/** The stored response named in the path, or a 404: unknown, another tenant's, deleted, or `store: false`. */
async function requireResponse(
  c: Context<AppEnv>,
): Promise<{ id: string; turnId: string; handle: ConversationHandle; stored: StoredTurn }> {
  const id = c.req.param("id") ?? "";
  const parsed = parseResponseId(id);
  if (!parsed) throw createNotFoundError("response", id);
  const handle = c.var.deps.conversations(c.var.tenantId, parsed.conversationId);
  const stored = await handle.readTurn(parsed.turnId);
  if (!stored || stored.deleted) throw createNotFoundError("response", id);
  return { id, turnId: parsed.turnId, handle, stored };
}

/** Retrieve, delete, cancel, input items. */
export function registerResponseObjectRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/v1/responses/:id", async (c) => {
    const query = retrieveResponseQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const { id, turnId, handle, stored } = await requireResponse(c);
    if (query.data.stream !== "true") return c.json(formatResponseObject(stored.turn));
    const stream = await handle.attachTurn(turnId);
    if (!stream) throw createNotFoundError("response", id);
    const startingAfter = query.data.starting_after;
    return new Response(
      createResponsesEventStream(readPartStream(stream), {
        keepAliveMs: 15_000,
        ...(startingAfter === undefined ? {} : { startingAfter }),
      }),
      { headers: SSE_HEADERS },
    );
  });

  app.delete("/v1/responses/:id", async (c) => {
    const { id, turnId, handle } = await requireResponse(c);
    if (!(await handle.deleteResponse(turnId))) throw createNotFoundError("response", id);
    return c.json({ id, object: "response.deleted", deleted: true });
  });

  app.post("/v1/responses/:id/cancel", async (c) => {
    const { id, turnId, handle, stored } = await requireResponse(c);
    if (stored.turn.response?.background !== true) {
      throw new ApiError({
        status: 400,
        type: "invalid_request_error",
        code: "invalid_value",
        param: null,
        message: "Only background responses can be cancelled.",
      });
    }
    const turn = await handle.cancelTurn(turnId);
    if (!turn) throw createNotFoundError("response", id);
    return c.json(formatResponseObject(turn));
  });

  app.get("/v1/responses/:id/input_items", async (c) => {
    const query = inputItemsQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const { stored } = await requireResponse(c);
    const { turn } = stored;
    // The earlier messages the request carried (conversation items of their own), then its user message.
    const items = [
      ...stored.context.map((m, i) => formatContextItem(buildContextItemId(turn.turnId, i), m)),
      ...formatTurnInputItems(turn),
    ];
    const ordered = query.data.order === "asc" ? items : items.reverse();
    const page = ordered.slice(0, query.data.limit);
    return c.json(formatItemList(page, { hasMore: ordered.length > page.length }));
  });
}
