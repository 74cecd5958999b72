import { z } from "@hono/zod-openapi";

/** A path segment naming an object: 1–128 characters (longer is a 400; an id that names nothing, a 404). */
export function pathIdSchema(name: string, example: string) {
  return z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name, in: "path" }, example });
}
