import { describe, expect, it } from "vitest";
import { PLAIN_SECRETS, createSecretSealer } from "../../workers/src/webhooks/create-secret-sealer.ts";

const KEY = btoa(String.fromCharCode(...new Uint8Array(32).map((_, i) => i * 7)));
const OTHER_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(9)));

describe("createSecretSealer", () => {
  it("round-trips, and never stores the same ciphertext twice (random IV)", async () => {
    const sealer = createSecretSealer(KEY);
    const a = await sealer.seal("whsec_abc");
    const b = await sealer.seal("whsec_abc");
    expect(a).toMatch(/^sealed:v1:/);
    expect(a).not.toContain("whsec_abc");
    expect(a).not.toBe(b);
    expect(await sealer.open(a)).toBe("whsec_abc");
  });

  it("refuses a value sealed under another key or tampered with", async () => {
    const sealed = await createSecretSealer(KEY).seal("whsec_abc");
    await expect(createSecretSealer(OTHER_KEY).open(sealed)).rejects.toThrow();
    const flipped = sealed.slice(0, -4) + (sealed.endsWith("AAA=") ? "BBB=" : "AAA=");
    await expect(createSecretSealer(KEY).open(flipped)).rejects.toThrow();
  });

  it("reads values stored before a key was configured as they are", async () => {
    expect(await createSecretSealer(KEY).open("whsec_plain")).toBe("whsec_plain");
    expect(await PLAIN_SECRETS.seal("whsec_plain")).toBe("whsec_plain");
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => createSecretSealer(btoa("short"))).toThrow(/32 bytes/);
  });
});
