import type { Context } from "hono";
import type { z } from "zod";
import {
  createValidationError,
  createInvalidJsonError,
  createPayloadTooLargeError,
  createUnsupportedMediaTypeError,
} from "../api/errors/request-errors.ts";

/** Largest request body the API reads, in bytes; messages have their own, smaller limit. */
export const MAX_BODY_BYTES = 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads and validates a JSON body: media type, size (counted while reading, so a lying content-length does not
 * help), UTF-8, JSON, then the schema. Each failure is its own clear 4xx, and nothing has been stored yet.
 */
export async function readJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const contentType = c.req.header("content-type") ?? null;
  if (!contentType || !/^application\/json\b/i.test(contentType))
    throw createUnsupportedMediaTypeError(contentType);
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw createPayloadTooLargeError(MAX_BODY_BYTES);
  const bytes = await readLimitedBody(c.req.raw.body, MAX_BODY_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw createInvalidJsonError();
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw createValidationError(parsed.error.issues);
  return parsed.data;
}

/** Reads a body, counting bytes as they arrive: a 413 as soon as it passes `limit`. */
export async function readLimitedBody(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw createPayloadTooLargeError(limit);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Like {@link readJsonBody}, but a request with no body at all (`curl -X POST`) reads as `{}`. */
export async function readOptionalJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  if (c.req.header("content-type") !== undefined) return readJsonBody(c, schema);
  if ((await c.req.text()) !== "") throw createUnsupportedMediaTypeError(null);
  const parsed = schema.safeParse({});
  if (!parsed.success) throw createValidationError(parsed.error.issues);
  return parsed.data;
}
