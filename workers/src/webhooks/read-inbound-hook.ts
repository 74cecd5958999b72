import type { InboundConfig } from "../db/webhook-tables.ts";
import { readJsonPointer } from "./read-json-pointer.ts";
import { verifyInboundSignature } from "./webhook-signatures.ts";

/** Inbound bodies larger than this are refused before any work (Slack and GitHub payloads are far smaller). */
export const MAX_INBOUND_BODY_BYTES = 256 * 1024;
/** Thread keys become part of a conversation's identity; longer ones are refused rather than truncated. */
export const MAX_THREAD_KEY_CHARS = 256;
export const MAX_INBOUND_TEXT_CHARS = 32_000;

export type InboundHook =
  | { kind: "turn"; deliveryId: string; threadKey: string; text: string }
  /** Slack's one-off `url_verification` handshake: answer the challenge, start nothing. */
  | { kind: "challenge"; challenge: string };

export type InboundRejection = {
  status: 400 | 401 | 422;
  code:
    | "missing_signature"
    | "invalid_signature"
    | "stale_timestamp"
    | "invalid_json"
    | "missing_thread_key"
    | "missing_text";
  message: string;
};

/**
 * Verifies and reads one inbound webhook (pure: no storage). The signature is checked over the raw body first, so
 * nothing from an unsigned body is ever parsed; then the thread key and text are read with the endpoint's pointers.
 */
export async function readInboundHook(
  config: InboundConfig,
  request: { headers: Headers; body: string; now: () => number },
): Promise<{ ok: true; hook: InboundHook } | { ok: false; rejection: InboundRejection }> {
  const verification = await verifyInboundSignature({
    scheme: config.scheme,
    secrets: [config.secret],
    ...request,
  });
  if (!verification.ok) {
    const rejections = {
      missing_headers: {
        code: "missing_signature",
        message: `The ${config.scheme} signature headers are missing.`,
      },
      bad_signature: { code: "invalid_signature", message: "The signature does not match the body." },
      stale_timestamp: {
        code: "stale_timestamp",
        message: "The signed timestamp is outside the 5-minute tolerance.",
      },
    } as const;
    return { ok: false, rejection: { status: 401, ...rejections[verification.reason] } };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(request.body);
  } catch {
    return reject(400, "invalid_json", "The body is not valid JSON.");
  }
  if (config.scheme === "slack" && readJsonPointer(payload, "/type") === "url_verification") {
    const challenge = readJsonPointer(payload, "/challenge");
    if (typeof challenge === "string") return { ok: true, hook: { kind: "challenge", challenge } };
  }
  const rawKey = readJsonPointer(payload, config.threadKey);
  const threadKey = typeof rawKey === "number" ? String(rawKey) : rawKey;
  if (typeof threadKey !== "string" || threadKey === "" || threadKey.length > MAX_THREAD_KEY_CHARS) {
    return reject(
      422,
      "missing_thread_key",
      `No thread key (a string of 1-${MAX_THREAD_KEY_CHARS} chars) at ${config.threadKey}.`,
    );
  }
  const text = readJsonPointer(payload, config.textKey);
  if (typeof text !== "string" || text.trim() === "" || text.length > MAX_INBOUND_TEXT_CHARS) {
    return reject(
      422,
      "missing_text",
      `No message text (1-${MAX_INBOUND_TEXT_CHARS} chars) at ${config.textKey}.`,
    );
  }
  // Slack re-signs its retries, but keeps the body's event_id: that is the delivery id worth deduping on.
  const slackEventId = config.scheme === "slack" ? readJsonPointer(payload, "/event_id") : undefined;
  const deliveryId = typeof slackEventId === "string" ? slackEventId : verification.deliveryId;
  return { ok: true, hook: { kind: "turn", deliveryId, threadKey, text } };
}

function reject(status: InboundRejection["status"], code: InboundRejection["code"], message: string) {
  return { ok: false as const, rejection: { status, code, message } };
}
