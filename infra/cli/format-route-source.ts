import type { TurnMol } from "../../schema/api/mol.ts";

/** `router`, `forced`, or `fallback(overloaded→previous)`: why this specialist answered. */
export function formatRouteSource(mol: TurnMol): string {
  if (mol.source !== "fallback" || mol.fallback === undefined) return mol.source;
  const to = mol.fallback.to === undefined ? "" : `→${mol.fallback.to}`;
  return `fallback(${mol.fallback.code}${to})`;
}
