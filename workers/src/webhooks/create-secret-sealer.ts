/** Marks a sealed value; a stored value without it is read as it is (rows written before a key was configured). */
const SEALED_PREFIX = "sealed:v1:";
const IV_BYTES = 12;

/** Encrypts webhook secrets at rest; HMAC needs them back in the clear, so they cannot be hashed like API keys. */
export interface SecretSealer {
  seal(plain: string): Promise<string>;
  open(stored: string): Promise<string>;
}

/** No key configured (the local mesh): values are stored as they are. */
export const PLAIN_SECRETS: SecretSealer = {
  seal: (plain) => Promise.resolve(plain),
  open: (stored) => Promise.resolve(stored),
};

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/**
 * AES-256-GCM with a random 96-bit IV per value (WebCrypto, so workerd and Node alike). `keyBase64` is 32 random
 * bytes in base64 (`openssl rand -base64 32`), kept as a Worker secret, never in D1 beside what it protects. The
 * length is checked at once; the key is imported on first use.
 */
export function createSecretSealer(keyBase64: string): SecretSealer {
  const raw = fromBase64(keyBase64.trim());
  if (raw.byteLength !== 32) throw new Error("the webhook secret key must be 32 bytes in base64");
  let imported: Promise<CryptoKey> | undefined;
  const key = () =>
    (imported ??= crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]));
  return {
    async seal(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const cipher = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv },
        await key(),
        new TextEncoder().encode(plain),
      );
      return `${SEALED_PREFIX}${toBase64(iv)}:${toBase64(new Uint8Array(cipher))}`;
    },
    async open(stored) {
      if (!stored.startsWith(SEALED_PREFIX)) return stored;
      const [iv, cipher] = stored.slice(SEALED_PREFIX.length).split(":");
      if (!iv || !cipher) throw new Error("malformed sealed secret");
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64(iv) },
        await key(),
        fromBase64(cipher),
      );
      return new TextDecoder().decode(plain);
    },
  };
}
