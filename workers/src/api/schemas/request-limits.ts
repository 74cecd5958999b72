/** Limits the harness decides; the schemas are built with them rather than hard-coding a number. */
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
