import { z } from "zod";
import { BadRequestError, ProtocolError, UnsupportedVersionError, type MolWireError } from "./wire-error.ts";
import { WIRE_VERSION } from "./version.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- generic, so callers' object literals skip excess-property checks
export function encodeWireMessage<T extends { version: typeof WIRE_VERSION }>(message: T): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

/**
 * Who is decoding decides the error class: a bad *request* is the sender's fault (`bad_request`), a bad
 * *reply* is a broken peer (`protocol_error`).
 */
export type DecodeDirection = "request" | "reply";

function invalid(direction: DecodeDirection, message: string, cause?: unknown): MolWireError {
  return direction === "request"
    ? new BadRequestError(message, { cause })
    : new ProtocolError(message, { cause });
}

function parseJson(data: Uint8Array, direction: DecodeDirection): unknown {
  let text: string;
  try {
    text = decoder.decode(data);
  } catch (cause) {
    throw invalid(direction, "message is not valid UTF-8", cause);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw invalid(direction, "message is not valid JSON", cause);
  }
}

/** Validates every message that crosses the wire; throws a typed {@link MolWireError} when it does not fit. */
export function decodeWireMessage<S extends z.ZodType>(
  schema: S,
  data: Uint8Array,
  direction: DecodeDirection,
  options: {
    /** Heartbeats: every version's beat is read (the schema checks the version), so mixed fleets are visible. */
    anyVersion?: boolean;
  } = {},
): z.infer<S> {
  const value = parseJson(data, direction);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(direction, "message must be a JSON object");
  }
  const version = "version" in value ? value.version : undefined;
  if (version !== WIRE_VERSION && options.anyVersion !== true) {
    throw new UnsupportedVersionError(
      `unsupported wire version ${JSON.stringify(version ?? null)}; this peer speaks "${WIRE_VERSION}"`,
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalid(direction, z.prettifyError(parsed.error), parsed.error);
  return parsed.data;
}

const requestIdSchema = z.object({ requestId: z.string() });

/** Best-effort request id of a message that failed validation, so the error reply can still name it. */
export function readRequestId(data: Uint8Array): string | undefined {
  try {
    const parsed = requestIdSchema.safeParse(JSON.parse(decoder.decode(data)));
    return parsed.success ? parsed.data.requestId.slice(0, 128) : undefined;
  } catch {
    return undefined;
  }
}
