/** `molmesh harness`: its actions as parsed, and the checks commander cannot make (the server checks the rest). */
import { HARNESS_HASH_PATTERN, HARNESS_LABEL_PATTERN } from "../../schema/harness/harness-registry.ts";
import { readListQuery, text, UsageError, type ListQuery, type OptionValues } from "./cli-option-values.ts";

export type HarnessCommand =
  | { name: "harness"; action: "push"; file: string; parent?: string; message?: string; json: boolean }
  | { name: "harness"; action: "show"; hash: string; json: boolean }
  | { name: "harness"; action: "diff"; from: string; to: string; json: boolean }
  | {
      name: "harness";
      action: "label";
      label: string;
      hash: string;
      canary?: { hash: string; percent: number };
      reason?: string;
      json: boolean;
    }
  | ({ name: "harness"; action: "history"; label: string; json: boolean } & ListQuery)
  | { name: "harness"; action: "rollback"; label: string; reason?: string; json: boolean }
  | { name: "harness"; action: "guard"; label: string; json: boolean };

/** Each action, its operands, and the only options it takes. */
const ACTIONS = {
  push: { operands: ["file"], options: ["parent", "message", "json"] },
  show: { operands: ["hash"], options: ["json"] },
  diff: { operands: ["hash", "hash"], options: ["json"] },
  label: { operands: ["label", "hash"], options: ["canary", "percent", "reason", "json"] },
  history: { operands: ["label"], options: ["limit", "after", "order", "json"] },
  rollback: { operands: ["label"], options: ["reason", "json"] },
  guard: { operands: ["label"], options: ["json"] },
} as const;
type HarnessAction = keyof typeof ACTIONS;

const isAction = (value: string | undefined): value is HarnessAction =>
  value !== undefined && Object.hasOwn(ACTIONS, value);

function readHash(raw: string, what: string): string {
  if (HARNESS_HASH_PATTERN.test(raw)) return raw;
  throw new UsageError(
    `${what} must be a harness hash (sha256: and 64 lower-case hex digits), got '${raw}'`,
    "harness",
  );
}

function readLabelName(raw: string): string {
  if (HARNESS_LABEL_PATTERN.test(raw)) return raw;
  throw new UsageError(
    `a label name is 1-64 of [a-z0-9._-], starting with a letter or digit, got '${raw}'`,
    "harness",
  );
}

function readPercent(raw: string): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (value >= 0 && value <= 100) return value;
  throw new UsageError(`--percent must be a whole number from 0 to 100, got '${raw}'`, "harness");
}

export function readHarnessCommand(rest: readonly string[], values: OptionValues): HarnessCommand {
  const [action, ...operands] = rest;
  if (!isAction(action)) {
    throw new UsageError(
      `harness takes push, show, diff, label, history, rollback or guard, got '${rest.join(" ")}'`,
      "harness",
    );
  }
  const spec = ACTIONS[action];
  const allowed: readonly string[] = spec.options;
  const stray = Object.keys(values).find((name) => values[name] !== undefined && !allowed.includes(name));
  if (stray !== undefined) {
    const flag = stray.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    throw new UsageError(`harness ${action} does not take --${flag}`, "harness");
  }
  if (operands.length !== spec.operands.length) {
    throw new UsageError(
      `harness ${action} takes ${spec.operands.map((name) => `<${name}>`).join(" ")}, got '${operands.join(" ")}'`,
      "harness",
    );
  }
  const json = values["json"] === true;
  const first = operands[0] ?? "";
  const second = operands[1] ?? "";
  const reason = text(values, "reason");
  switch (action) {
    case "push": {
      const parent = text(values, "parent");
      const message = text(values, "message");
      return {
        name: "harness",
        action,
        file: first,
        json,
        ...(parent === undefined ? {} : { parent: readHash(parent, "--parent") }),
        ...(message === undefined ? {} : { message }),
      };
    }
    case "show":
      return { name: "harness", action, hash: readHash(first, "the hash"), json };
    case "diff":
      return {
        name: "harness",
        action,
        from: readHash(first, "the first hash"),
        to: readHash(second, "the second hash"),
        json,
      };
    case "label": {
      const canary = text(values, "canary");
      const percent = text(values, "percent");
      if ((canary === undefined) !== (percent === undefined))
        throw new UsageError("--canary and --percent go together", "harness");
      return {
        name: "harness",
        action,
        label: readLabelName(first),
        hash: readHash(second, "the hash"),
        json,
        ...(canary === undefined || percent === undefined
          ? {}
          : { canary: { hash: readHash(canary, "--canary"), percent: readPercent(percent) } }),
        ...(reason === undefined ? {} : { reason }),
      };
    }
    case "history":
      return {
        name: "harness",
        action,
        label: readLabelName(first),
        json,
        ...readListQuery(values, "harness"),
      };
    case "rollback":
      return {
        name: "harness",
        action,
        label: readLabelName(first),
        json,
        ...(reason === undefined ? {} : { reason }),
      };
    case "guard":
      return { name: "harness", action, label: readLabelName(first), json };
  }
}
