import type { TurnMol } from "../../conversation/turn-record.ts";
import { mapTurnErrorToApiError } from "../errors/api-error.ts";
import { ROUTED_MODEL } from "../schemas/resolve-model.ts";

/**
 * `mol` as clients see it. A route fallback keeps its wire code (it says why another specialist answered) but
 * carries the public message: the stored one is the node's and may name subjects and nodes.
 */
export function formatMol(mol: TurnMol): TurnMol {
  if (mol.fallback === undefined) return mol;
  const { code, message } = mol.fallback;
  return {
    ...mol,
    fallback: { ...mol.fallback, message: mapTurnErrorToApiError({ code, message }).message },
  };
}

/** The model name the client asked for, rebuilt from the turn, so a replay echoes the original request. */
export function readModelName(mol: TurnMol): string {
  return mol.source === "forced" ? `${ROUTED_MODEL}:${mol.label}` : ROUTED_MODEL;
}
