import { z } from "@hono/zod-openapi";

export const MAX_ITEMS_PAGE = 100;
export const DEFAULT_ITEMS_PAGE = 20;

/** `limit` and `order` of every paginated list (OpenAI's conventions: 1–100, default 20, newest first). */
export const pageQueryFields = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_ITEMS_PAGE)
    .default(DEFAULT_ITEMS_PAGE)
    .openapi({ param: { name: "limit", in: "query" }, example: DEFAULT_ITEMS_PAGE }),
  order: z
    .enum(["asc", "desc"])
    .default("desc")
    .openapi({ param: { name: "order", in: "query" } }),
};
