import type { HarnessDocument, SpecialistSettings } from "./harness-settings.ts";

/** Own keys only: a label such as "constructor" must not find Object.prototype's members. */
export function findSpecialist(harness: HarnessDocument, label: string): SpecialistSettings | undefined {
  return Object.hasOwn(harness.specialists, label) ? harness.specialists[label] : undefined;
}
