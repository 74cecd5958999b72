const FINGERPRINT_HEX_CHARS = 16;

/**
 * The remote server does not expose weight hashes, so the revision is a digest of what identifies the
 * weights from here (flavor, base, served name, path): equal on every node serving the same files.
 */
export async function computeFingerprint(parts: readonly string[]): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, FINGERPRINT_HEX_CHARS);
}
