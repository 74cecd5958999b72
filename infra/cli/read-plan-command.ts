import { UsageError } from "./usage-error.ts";

export interface PlanCommand {
  name: "plan";
  spec?: string;
  base?: string;
  adapters: string[];
  specialists?: number;
  slots?: number;
  context?: number;
  json: boolean;
}

export interface PlanOptionValues {
  spec?: string;
  base?: string;
  adapter?: string[];
  specialists?: string;
  slots?: string;
  context?: string;
  json?: boolean;
}

function readWholeNumber(raw: string | undefined, flag: string, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(Number.isSafeInteger(value) && value >= min)) {
    throw new UsageError(`--${flag} must be a whole number ≥ ${min}, got '${raw}'`, "plan");
  }
  return value;
}

/** `plan` reads a spec, or a base and its adapters, or (neither given) the tiny generated model. */
export function readPlanCommand(values: PlanOptionValues, rest: readonly string[]): PlanCommand {
  if (rest.length > 0) {
    throw new UsageError(`plan takes no arguments, got '${rest.join(" ")}' (use --base/--adapter)`, "plan");
  }
  const adapters = values.adapter ?? [];
  if (values.spec !== undefined && (values.base !== undefined || adapters.length > 0)) {
    throw new UsageError("--spec describes the whole model: give it without --base or --adapter", "plan");
  }
  if (values.base === undefined && adapters.length > 0) {
    throw new UsageError("--adapter needs the --base model it applies to", "plan");
  }
  if (values.base !== undefined && adapters.length === 0) {
    throw new UsageError("--base needs at least one --adapter", "plan");
  }
  const command: PlanCommand = { name: "plan", adapters, json: values.json === true };
  if (values.spec !== undefined) command.spec = values.spec;
  if (values.base !== undefined) command.base = values.base;
  const specialists = readWholeNumber(values.specialists, "specialists", 1);
  const slots = readWholeNumber(values.slots, "slots", 0);
  const context = readWholeNumber(values.context, "context", 1);
  if (specialists !== undefined) command.specialists = specialists;
  if (slots !== undefined) command.slots = slots;
  if (context !== undefined) command.context = context;
  return command;
}
