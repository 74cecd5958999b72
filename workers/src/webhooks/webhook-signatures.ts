/**
 * Webhook signatures both ways: outbound deliveries are signed the Standard Webhooks way with `whsec_` secrets we
 * generate; inbound hooks are verified for Standard Webhooks, GitHub and Slack.
 */
import { Webhook } from "standardwebhooks";
import { encodeHex, timingSafeEqualText } from "../../../schema/harness/content-hash.ts";

/** Prefix that marks a Standard Webhooks secret; the rest is the base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** A fresh `whsec_` secret: 32 random bytes is inside the spec's 24–64 range and matches HMAC-SHA256's block strength. */
export function generateWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  // btoa over a binary string, not Buffer, because workerd has no Buffer without the Node compatibility flag.
  return WEBHOOK_SECRET_PREFIX + btoa(String.fromCharCode(...bytes));
}

export interface WebhookToSign {
  /** Stable across retries: receivers dedupe on it. */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  body: string;
  /** `whsec_<base64>`; two during rotation, so receivers holding either secret accept the delivery. */
  secrets: readonly string[];
}

/** A type alias, not an interface, so it stays assignable to `Record<string, string>` and `HeadersInit`. */
export type StandardWebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/**
 * Signs one delivery attempt the Standard Webhooks way. The `standardwebhooks` package is pure JS (stablelib base64 +
 * fast-sha256, no Buffer or node:crypto), so it is safe in workerd and keeps our bytes identical to what receivers
 * using the same library compute.
 */
export function signWebhook({ id, timestamp, body, secrets }: WebhookToSign): StandardWebhookHeaders {
  if (secrets.length === 0) throw new Error("signWebhook needs at least one secret");
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new Error("timestamp must be whole unix seconds");
  // Whitespace would break the header line (header injection); an empty id defeats receiver-side dedupe.
  if (id === "" || /\s/.test(id)) throw new Error("webhook id must be non-empty and without whitespace");
  const date = new Date(timestamp * 1000);
  const signatures = secrets.map((secret) => new Webhook(secret).sign(id, date, body));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

export type InboundSignatureScheme = "standard" | "github" | "slack";

export type InboundVerification =
  | { ok: true; deliveryId: string }
  | { ok: false; reason: "missing_headers" | "bad_signature" | "stale_timestamp" };

export interface InboundRequest {
  scheme: InboundSignatureScheme;
  /** Any one may match, so a receiver can rotate without dropping deliveries. Standard: `whsec_…`; others: raw text. */
  secrets: readonly string[];
  headers: Headers | Readonly<Record<string, string | undefined>>;
  /** The raw body exactly as received: re-serialised JSON would not match the sender's HMAC. */
  body: string;
  /** Epoch milliseconds; injected so tests and replays do not depend on the wall clock. */
  now: () => number;
}

/** Standard Webhooks and Slack both allow ±5 minutes of clock skew; older requests are treated as replays. */
export const INBOUND_TOLERANCE_SECONDS = 5 * 60;

/** Verifies an inbound webhook's signature over its raw body, for Standard Webhooks, GitHub and Slack. */
export async function verifyInboundSignature(request: InboundRequest): Promise<InboundVerification> {
  const read = createHeaderReader(request.headers);
  switch (request.scheme) {
    case "standard":
      return verifyStandard(request, read);
    case "github":
      return verifyGithub(request, read);
    case "slack":
      return verifySlack(request, read);
  }
}

type HeaderReader = (name: string) => string | undefined;

function createHeaderReader(headers: InboundRequest["headers"]): HeaderReader {
  if (headers instanceof Headers) return (name) => headers.get(name) ?? undefined;
  const lowered = new Map(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
  return (name) => lowered.get(name);
}

/** Strict digits only: `parseInt` would accept "123abc", letting a malformed header through the skew check. */
function parseUnixSeconds(text: string): number | undefined {
  return /^\d{1,12}$/.test(text) ? Number(text) : undefined;
}

function isStale(timestamp: number, now: () => number): boolean {
  return Math.abs(Math.floor(now() / 1000) - timestamp) > INBOUND_TOLERANCE_SECONDS;
}

function verifyStandard(request: InboundRequest, read: HeaderReader): InboundVerification {
  const id = read("webhook-id");
  const timestampText = read("webhook-timestamp");
  const signatureList = read("webhook-signature");
  if (!id || !timestampText || !signatureList) return { ok: false, reason: "missing_headers" };
  const timestamp = parseUnixSeconds(timestampText);
  if (timestamp === undefined) return { ok: false, reason: "bad_signature" };
  // The package's own verify() reads Date.now(), so we check skew with the injected clock and only borrow its signer.
  if (isStale(timestamp, request.now)) return { ok: false, reason: "stale_timestamp" };
  const offered = signatureList.split(" ").filter((entry) => entry.startsWith("v1,"));
  const date = new Date(timestamp * 1000);
  for (const secret of request.secrets) {
    const expected = new Webhook(secret).sign(id, date, request.body);
    if (offered.some((entry) => timingSafeEqualText(entry, expected))) return { ok: true, deliveryId: id };
  }
  return { ok: false, reason: "bad_signature" };
}

async function matchesHexHmac(
  secrets: readonly string[],
  message: string,
  offeredHex: string,
): Promise<boolean> {
  for (const secret of secrets) {
    const expected = encodeHex(await hmacSha256(secret, message));
    // Senders use lower-case hex; lower-casing the offer costs nothing and is not secret-dependent.
    if (timingSafeEqualText(offeredHex.toLowerCase(), expected)) return true;
  }
  return false;
}

/** GitHub signs only the body, with no timestamp: replay protection is deduping on `X-GitHub-Delivery`. */
async function verifyGithub(request: InboundRequest, read: HeaderReader): Promise<InboundVerification> {
  const signature = read("x-hub-signature-256");
  const deliveryId = read("x-github-delivery");
  if (!signature || !deliveryId) return { ok: false, reason: "missing_headers" };
  if (!signature.startsWith("sha256=")) return { ok: false, reason: "bad_signature" };
  const ok = await matchesHexHmac(request.secrets, request.body, signature.slice("sha256=".length));
  return ok ? { ok: true, deliveryId } : { ok: false, reason: "bad_signature" };
}

/**
 * Slack sends no delivery id header, so the verified signature stands in as a per-request id; deduping Slack events
 * proper needs the body's `event_id`, which Slack keeps across its retries while the signature changes.
 */
async function verifySlack(request: InboundRequest, read: HeaderReader): Promise<InboundVerification> {
  const signature = read("x-slack-signature");
  const timestampText = read("x-slack-request-timestamp");
  if (!signature || !timestampText) return { ok: false, reason: "missing_headers" };
  const timestamp = parseUnixSeconds(timestampText);
  if (timestamp === undefined || !signature.startsWith("v0=")) return { ok: false, reason: "bad_signature" };
  if (isStale(timestamp, request.now)) return { ok: false, reason: "stale_timestamp" };
  // Sign the header text as received: Slack's basestring uses it verbatim.
  const basestring = `v0:${timestampText}:${request.body}`;
  const ok = await matchesHexHmac(request.secrets, basestring, signature.slice("v0=".length));
  return ok ? { ok: true, deliveryId: signature } : { ok: false, reason: "bad_signature" };
}

/** HMAC-SHA256 keyed by a text secret's UTF-8 bytes, through WebCrypto so the same code runs in workerd and Node. */
export async function hmacSha256(secret: string, message: string): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
}
