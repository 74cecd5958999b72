const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 248 = 4 × 62: bytes at or above it are dropped, so `byte % 62` is uniform over the alphabet. */
const UNBIASED_LIMIT = 248;
/** The most `getRandomValues` fills in one call. */
const MAX_RANDOM_BYTES = 65_536;

/** `length` uniformly random base62 characters from `crypto.getRandomValues` (log2(62) ≈ 5.95 bits each). */
export function generateBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    // A few spare bytes per round: about 3 % are rejected, so one round almost always suffices.
    for (const byte of crypto.getRandomValues(
      new Uint8Array(Math.min(length - out.length + 8, MAX_RANDOM_BYTES)),
    )) {
      if (byte < UNBIASED_LIMIT && out.length < length) out += ALPHABET.charAt(byte % ALPHABET.length);
    }
  }
  return out;
}
