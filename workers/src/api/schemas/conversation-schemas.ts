import { z } from "@hono/zod-openapi";
import { metadataSchema } from "./metadata-schema.ts";
import { describeMessageTooLong, measureUtf8Bytes, type RequestLimits } from "./request-limits.ts";

import { pageQueryFields } from "./page-query-fields.ts";
import { pathIdSchema } from "./path-id.ts";

export { DEFAULT_ITEMS_PAGE, MAX_ITEMS_PAGE } from "./page-query-fields.ts";

/** `POST /v1/conversations`. Seeding `items` would bypass routing and summaries, so it is refused by name. */
export const createConversationBodySchema = z
  .strictObject({
    metadata: metadataSchema.optional(),
    items: z
      .array(z.unknown())
      .max(0, { message: "items are not supported; send the first turn to POST /v1/responses" })
      .optional()
      .openapi({ description: "Not supported: must be absent or empty." }),
  })
  .openapi("CreateConversationRequest");
export type CreateConversationBody = z.infer<typeof createConversationBodySchema>;

/** `POST /v1/conversations/{id}`: replaces the metadata (as OpenAI's update does). */
export const updateConversationBodySchema = z
  .strictObject({ metadata: metadataSchema })
  .openapi("UpdateConversationRequest");

export const conversationIdParamsSchema = z.object({ id: pathIdSchema("id", "conv_01J9Z3") });

/** `GET /v1/conversations/{id}/items`; unknown query parameters are ignored, as OpenAI does. */
export const listItemsQuerySchema = z
  .object({
    after: z
      .string()
      .min(1)
      .optional()
      .openapi({
        param: { name: "after", in: "query" },
        description: "An item id; the page starts after it.",
      }),
    ...pageQueryFields,
  })
  .openapi("ListConversationItemsQuery");
export type ListItemsQuery = z.infer<typeof listItemsQuerySchema>;

const itemTextPartSchema = z.strictObject({
  type: z.enum(["input_text", "output_text"]),
  text: z.string(),
  annotations: z.array(z.unknown()).optional(),
});

/**
 * `POST /v1/conversations/{id}/items`: user and assistant messages added without a turn; they open the next
 * turn's views. Their bytes together stay within one user message's limit, as a turn's earlier items do.
 */
export function createItemsBodySchema(limits: RequestLimits) {
  return z
    .strictObject({
      items: z
        .array(
          z.strictObject({
            type: z.literal("message").optional(),
            role: z.enum(["user", "assistant"]),
            content: z.union([z.string(), z.array(itemTextPartSchema).min(1)]),
          }),
        )
        .min(1)
        .max(20),
    })
    .superRefine((body, ctx) => {
      const bytes = body.items.reduce((sum, item) => sum + measureUtf8Bytes(readItemText(item.content)), 0);
      if (bytes > limits.maxMessageBytes)
        ctx.addIssue({ code: "custom", path: ["items"], message: describeMessageTooLong(limits) });
    })
    .openapi("CreateConversationItemsRequest");
}

export function readItemText(content: string | ReadonlyArray<{ text: string }>): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}
