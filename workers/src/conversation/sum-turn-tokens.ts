import type { TurnMol } from "./turn-record.ts";

/** Every token a turn's hops really used (prompt, cached included, and completion): what counts against quotas. */
export function sumTurnTokens(mol: TurnMol): number {
  return Object.values(mol.usage).reduce(
    (total, usage) => total + (usage ? usage.promptTokens + usage.completionTokens : 0),
    0,
  );
}
