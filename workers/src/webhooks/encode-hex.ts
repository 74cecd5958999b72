/** Lower-case hex, the spelling GitHub and Slack use for their signatures. */
export function encodeHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
