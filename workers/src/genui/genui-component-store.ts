import type { GenuiValidationReport } from "./validate-component.ts";

/** A component that passed validation, as stored for its tenant. */
export interface GenuiComponent {
  id: string;
  tenantId: string;
  source: string;
  compiled: string;
  report: GenuiValidationReport;
  hostOrigin: string;
  /** SHA-256 (hex) of the render token; the token itself is only ever in the render URL. */
  renderTokenHash: string;
  /** Unix seconds. */
  renderTokenExpiresAt: number;
  createdAt: number;
}

export interface GenuiComponentStore {
  create(component: GenuiComponent): Promise<void>;
  /** The tenant's component, or undefined (another tenant's is indistinguishable from a missing one). */
  get(tenantId: string, id: string): Promise<GenuiComponent | undefined>;
  /** By id alone, for the capability URL: the caller checks the token against `renderTokenHash`. */
  getForRender(id: string): Promise<GenuiComponent | undefined>;
}

/** How long a render URL opens its component. */
export const GENUI_RENDER_TOKEN_TTL_SECONDS = 3600;

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

/** A 128-bit random token (URL-safe hex) and its SHA-256 for storage. */
export async function mintRenderToken(): Promise<{ token: string; hash: string }> {
  const token = hex(crypto.getRandomValues(new Uint8Array(16)));
  return { token, hash: await hashRenderToken(token) };
}

export async function hashRenderToken(token: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
}

/** Whether `token` opens `component` now; compares hashes in constant time. */
export async function checkRenderToken(
  component: GenuiComponent,
  token: string,
  nowSeconds: number,
): Promise<boolean> {
  if (!/^[0-9a-f]{32}$/.test(token) || component.renderTokenExpiresAt <= nowSeconds) return false;
  const given = await hashRenderToken(token);
  let diff = given.length ^ component.renderTokenHash.length;
  for (let i = 0; i < given.length; i++)
    diff |= given.charCodeAt(i) ^ component.renderTokenHash.charCodeAt(i);
  return diff === 0;
}
