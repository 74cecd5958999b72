import { parseArgs } from "node:util";

/** A mistake in how the command was called: exit code 2, with the help that shows the right way. */
export class UsageError extends Error {
  override name = "UsageError";
  /** The command whose help to point at; undefined points at the general help. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

export const COMMAND_NAMES = ["chat", "conversations", "items", "plan", "models"] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];
export type ListOrder = "asc" | "desc";

export interface ListQuery {
  limit?: number;
  after?: string;
  order?: ListOrder;
}

export type CliCommand =
  | { name: "help"; topic?: CommandName }
  | { name: "chat"; conversation?: string | undefined; model?: string | undefined; json: boolean }
  | ({ name: "conversations"; json: boolean } & ListQuery)
  | ({ name: "items"; conversationId: string; json: boolean } & ListQuery)
  | PlanCommand
  | ModelsCommand;

export interface CliArgs {
  command: CliCommand;
  /** Flags only; the environment and defaults are applied by resolveConnection. */
  connection: { baseUrl?: string | undefined; apiKey?: string | undefined };
}

const OPTIONS = {
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
  conversation: { type: "string", short: "c" },
  model: { type: "string", short: "m" },
  limit: { type: "string", short: "n" },
  after: { type: "string" },
  order: { type: "string" },
  spec: { type: "string" },
  base: { type: "string" },
  adapter: { type: "string", multiple: true },
  specialists: { type: "string" },
  slots: { type: "string" },
  context: { type: "string" },
} as const;
type OptionName = keyof typeof OPTIONS;

const GLOBAL_OPTIONS: readonly OptionName[] = ["base-url", "api-key", "help"];
const COMMAND_OPTIONS: Record<CommandName, readonly OptionName[]> = {
  chat: ["conversation", "model", "json"],
  conversations: ["limit", "after", "order", "json"],
  items: ["limit", "after", "order", "json"],
  plan: ["spec", "base", "adapter", "specialists", "slots", "context", "json"],
  models: [],
};
/** The server's page bounds (1–100), checked here so a typo costs no request. */
const MAX_LIMIT = 100;

function isCommandName(value: string | undefined): value is CommandName {
  return COMMAND_NAMES.some((name) => name === value);
}

function readLimit(raw: string | undefined, command: CommandName): number | undefined {
  if (raw === undefined) return undefined;
  const limit = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, got '${raw}'`, command);
  }
  return limit;
}

function readOrder(raw: string | undefined, command: CommandName): ListOrder | undefined {
  if (raw === undefined || raw === "asc" || raw === "desc") return raw;
  throw new UsageError(`--order must be asc or desc, got '${raw}'`, command);
}

function readModel(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "mol" || /^mol:\S+$/.test(raw)) return raw;
  throw new UsageError(`--model must be mol or mol:<label>, got '${raw}'`, "chat");
}

/** Node's messages end with advice about `--` that does not apply here; the first sentence is the point. */
function shortenParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\. To specify a positional argument[\s\S]*$/, "");
}

/** argv after the script name → a command; every mistake is a UsageError naming the command it concerns. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError(shortenParseError(error));
  }
  const { values, positionals, tokens } = parsed;
  const connection = { baseUrl: values["base-url"], apiKey: values["api-key"] };
  const [first, ...rest] = positionals;

  if (first === "help") {
    const topic = rest[0];
    if (topic !== undefined && !isCommandName(topic)) throw new UsageError(`unknown command '${topic}'`);
    return { command: topic === undefined ? { name: "help" } : { name: "help", topic }, connection };
  }
  if (first === undefined) {
    if (values.help === true) return { command: { name: "help" }, connection };
    throw new UsageError("missing command");
  }
  if (!isCommandName(first)) throw new UsageError(`unknown command '${first}'`);
  if (values.help === true) return { command: { name: "help", topic: first }, connection };

  const allowed = [...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[first]];
  for (const token of tokens) {
    if (token.kind === "option" && !allowed.some((name) => name === token.name)) {
      throw new UsageError(`${first} does not take --${token.name}`, first);
    }
  }
  const json = values.json === true;

  switch (first) {
    case "chat": {
      if (rest.length > 0) throw new UsageError(`chat takes no arguments, got '${rest.join(" ")}'`, first);
      return {
        command: { name: "chat", conversation: values.conversation, model: readModel(values.model), json },
        connection,
      };
    }
    case "conversations": {
      if (rest.length > 0) {
        throw new UsageError(`conversations takes no arguments, got '${rest.join(" ")}'`, first);
      }
      return { command: { name: "conversations", json, ...readListQuery(values, first) }, connection };
    }
    case "items": {
      const [conversationId, ...extra] = rest;
      if (conversationId === undefined) throw new UsageError("items needs a conversation id", first);
      if (extra.length > 0)
        throw new UsageError(`items takes one conversation id, got '${rest.join(" ")}'`, first);
      return {
        command: { name: "items", conversationId, json, ...readListQuery(values, first) },
        connection,
      };
    }
    case "plan":
      return { command: readPlanCommand(values, rest), connection };
    case "models":
      return { command: readModelsCommand(rest), connection };
  }
}

function readListQuery(
  values: { limit?: string; after?: string; order?: string },
  command: CommandName,
): ListQuery {
  const query: ListQuery = {};
  const limit = readLimit(values.limit, command);
  const order = readOrder(values.order, command);
  if (limit !== undefined) query.limit = limit;
  if (values.after !== undefined) query.after = values.after;
  if (order !== undefined) query.order = order;
  return query;
}

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

export type ModelsCommand =
  { name: "models"; action: "list" } | { name: "models"; action: "pull"; model: string };

function readModelsCommand(rest: readonly string[]): ModelsCommand {
  const [action, ...names] = rest;
  if (action === "list" && names.length === 0) return { name: "models", action };
  if (action === "pull" && names.length === 1 && names[0] !== undefined) {
    return { name: "models", action, model: names[0] };
  }
  if (action === "pull") throw new UsageError("models pull takes one model name", "models");
  throw new UsageError(`models takes list or pull <name>, got '${rest.join(" ")}'`, "models");
}
