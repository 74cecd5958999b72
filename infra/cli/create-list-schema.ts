import { z } from "zod";

/** OpenAI's cursor page: `{object: "list", data, first_id, last_id, has_more}`. */
export function createListSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    object: z.literal("list"),
    data: z.array(item),
    first_id: z.string().nullish(),
    last_id: z.string().nullish(),
    has_more: z.boolean(),
  });
}
