import type { Mol } from "./mol-schema.ts";

/** `router`, `forced`, or `fallback(overloaded→previous)`: why this specialist answered. */
export function formatRouteSource(mol: Mol): string {
  if (mol.source !== "fallback" || mol.fallback === undefined) return mol.source;
  const to = mol.fallback.to === undefined ? "" : `→${mol.fallback.to}`;
  return `fallback(${mol.fallback.code}${to})`;
}
