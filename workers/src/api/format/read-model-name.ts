import type { TurnMol } from "../../conversation/turn-record.ts";
import { ROUTED_MODEL } from "../schemas/resolve-model.ts";

/** The model name the client asked for, rebuilt from the turn, so a replay echoes the original request. */
export function readModelName(mol: TurnMol): string {
  return mol.source === "forced" ? `${ROUTED_MODEL}:${mol.label}` : ROUTED_MODEL;
}
