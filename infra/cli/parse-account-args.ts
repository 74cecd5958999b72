/** `molmesh usage` and `molmesh webhooks`: their commands as parsed, and the checks commander cannot make. */
import { WEBHOOK_EVENT_TYPES } from "../../schema/api/webhook-events.ts";
import {
  list,
  readListQuery,
  text,
  UsageError,
  type ListQuery,
  type OptionValues,
} from "./cli-option-values.ts";

export const USAGE_GROUPS = ["user", "key", "day", "adapter"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageCommand {
  name: "usage";
  groupBy?: UsageGroup;
  /** As given (a date, a date-time or unix seconds): the server reads it. */
  from?: string;
  to?: string;
  csv: boolean;
  json: boolean;
}

export type WebhooksCommand =
  | ({ name: "webhooks"; action: "list"; json: boolean } & ListQuery)
  | {
      name: "webhooks";
      action: "create";
      url: string;
      events: string[];
      description?: string;
      json: boolean;
    }
  | { name: "webhooks"; action: "delete"; id: string; json: boolean };

function readTime(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined || /^\d+$/.test(raw) || !Number.isNaN(Date.parse(raw))) return raw;
  throw new UsageError(
    `--${flag} must be a date (2026-12-01), a date-time or unix seconds, got '${raw}'`,
    "usage",
  );
}

export function readUsageCommand(rest: readonly string[], values: OptionValues): UsageCommand {
  if (rest.length > 0) throw new UsageError(`usage takes no arguments, got '${rest.join(" ")}'`, "usage");
  const groupBy = text(values, "groupBy");
  if (groupBy !== undefined && !USAGE_GROUPS.some((group) => group === groupBy)) {
    throw new UsageError(`--group-by must be ${USAGE_GROUPS.join(", ")}, got '${groupBy}'`, "usage");
  }
  if (values["csv"] === true && values["json"] === true)
    throw new UsageError("--csv and --json exclude each other", "usage");
  const command: UsageCommand = { name: "usage", csv: values["csv"] === true, json: values["json"] === true };
  if (groupBy !== undefined) command.groupBy = groupBy as UsageGroup;
  const from = readTime(text(values, "from"), "from");
  const to = readTime(text(values, "to"), "to");
  if (from !== undefined) command.from = from;
  if (to !== undefined) command.to = to;
  return command;
}

/** Each action takes only its own options: `webhooks delete --event x` is a mistake, not something to ignore. */
const WEBHOOK_ACTION_OPTIONS = {
  list: ["limit", "after", "order", "json"],
  create: ["event", "description", "json"],
  delete: ["json"],
} as const;

export function readWebhooksCommand(rest: readonly string[], values: OptionValues): WebhooksCommand {
  const [action, ...operands] = rest;
  if (action !== "list" && action !== "create" && action !== "delete") {
    throw new UsageError(
      `webhooks takes list, create <url> or delete <id>, got '${rest.join(" ")}'`,
      "webhooks",
    );
  }
  const allowed: readonly string[] = WEBHOOK_ACTION_OPTIONS[action];
  const stray = Object.keys(values).find((name) => values[name] !== undefined && !allowed.includes(name));
  if (stray !== undefined) {
    const flag = stray.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    throw new UsageError(`webhooks ${action} does not take --${flag}`, "webhooks");
  }
  const json = values["json"] === true;
  if (action === "list") {
    if (operands.length > 0)
      throw new UsageError(`webhooks list takes no arguments, got '${operands.join(" ")}'`, "webhooks");
    return { name: "webhooks", action, json, ...readListQuery(values, "webhooks") };
  }
  const [target, ...extra] = operands;
  const what = action === "create" ? "url" : "endpoint id";
  if (target === undefined || extra.length > 0) {
    throw new UsageError(`webhooks ${action} takes one ${what}, got '${operands.join(" ")}'`, "webhooks");
  }
  if (action === "delete") return { name: "webhooks", action, id: target, json };
  const events = list(values, "event") ?? [];
  const unknown = events.find((event) => !WEBHOOK_EVENT_TYPES.some((type) => type === event));
  if (events.length === 0 || unknown !== undefined) {
    const said = unknown === undefined ? "needs at least one --event" : `has no event '${unknown}'`;
    throw new UsageError(`webhooks create ${said}; events: ${WEBHOOK_EVENT_TYPES.join(", ")}`, "webhooks");
  }
  const description = text(values, "description");
  return {
    name: "webhooks",
    action,
    url: target,
    events,
    json,
    ...(description === undefined ? {} : { description }),
  };
}
