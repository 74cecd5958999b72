const encoder = new TextEncoder();

/**
 * UTF-8 size of a string. Budgets are in bytes because every non-control token of a byte-level or
 * byte-fallback vocabulary covers at least one byte, so bytes are a tokenizer-independent upper bound on tokens.
 */
export function countUtf8Bytes(text: string): number {
  return encoder.encode(text).length;
}
