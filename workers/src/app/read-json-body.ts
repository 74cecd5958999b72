import type { MiddlewareHandler } from "hono";
import {
  createInvalidJsonError,
  createPayloadTooLargeError,
  createUnsupportedMediaTypeError,
} from "../api/errors/request-errors.ts";
import type { AppEnv } from "./app-deps.ts";

/** Largest request body the API reads, in bytes; messages have their own, smaller limit. */
export const MAX_BODY_BYTES = 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** `application/json` or `application/<something>+json`, parameters aside: what the route validators parse. */
export function isJsonMediaType(contentType: string): boolean {
  return /^application\/([\w.-]+\+)?json$/i.test(contentType.split(";")[0]?.trim() ?? "");
}

/**
 * Route middleware, ahead of the route's body validator: media type (415), size (413, counted while reading, so
 * a lying content-length does not help), UTF-8 and JSON syntax (400 `invalid_json`), each its own clear 4xx
 * before anything is stored. It reads a copy, so the validator then parses the body against the route's schema.
 * `optional`: a request with no body at all (`curl -X POST`) passes too, and reads as `{}`.
 */
export function checkJsonBody(options: { optional?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const contentType = c.req.header("content-type") ?? null;
    if (contentType === null && options.optional) {
      const bytes = await readLimitedBody(c.req.raw.clone().body, MAX_BODY_BYTES);
      if (bytes.byteLength > 0) throw createUnsupportedMediaTypeError(null);
      return next();
    }
    if (contentType === null || !isJsonMediaType(contentType))
      throw createUnsupportedMediaTypeError(contentType);
    const declared = Number(c.req.header("content-length") ?? "0");
    if (declared > MAX_BODY_BYTES) throw createPayloadTooLargeError(MAX_BODY_BYTES);
    const bytes = await readLimitedBody(c.req.raw.clone().body, MAX_BODY_BYTES);
    try {
      JSON.parse(decoder.decode(bytes));
    } catch {
      throw createInvalidJsonError();
    }
    return next();
  };
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
      // Not awaited: cancelling one branch of a tee (checkJsonBody reads a clone) settles only once the other
      // branch is cancelled too.
      reader.cancel().catch(() => undefined);
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
