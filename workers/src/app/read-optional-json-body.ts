import type { Context } from "hono";
import type { z } from "zod";
import { createValidationError, createUnsupportedMediaTypeError } from "../api/errors/request-errors.ts";
import { readJsonBody } from "./read-json-body.ts";

/** Like {@link readJsonBody}, but a request with no body at all (`curl -X POST`) reads as `{}`. */
export async function readOptionalJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  if (c.req.header("content-type") !== undefined) return readJsonBody(c, schema);
  if ((await c.req.text()) !== "") throw createUnsupportedMediaTypeError(null);
  const parsed = schema.safeParse({});
  if (!parsed.success) throw createValidationError(parsed.error.issues);
  return parsed.data;
}
