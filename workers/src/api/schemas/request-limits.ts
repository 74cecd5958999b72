/**
 * The largest message a request may carry (64 KiB of UTF-8), whatever the harness: a pasted stack trace or log
 * is accepted whole. The timeline and the items keep it whole; a view keeps what fits (the harness's
 * `readMaxUserMessageBytes`, its head and tail around the clipped mark). Bodies are capped at 1 MiB as well.
 */
export const MAX_MESSAGE_BYTES = 65_536;

/** Limits the schemas are built with rather than hard-coding a number (tests use small ones). */
export interface RequestLimits {
  /** Largest user (or chat) message, in UTF-8 bytes, after its text parts are joined. */
  maxMessageBytes: number;
}

const encoder = new TextEncoder();

/** Bytes, not chars: the limit protects storage rows and the wire, which both count bytes. */
export function measureUtf8Bytes(text: string): number {
  return encoder.encode(text).byteLength;
}

export function describeMessageTooLong(limits: RequestLimits): string {
  return `the message is longer than ${limits.maxMessageBytes} bytes (UTF-8)`;
}
