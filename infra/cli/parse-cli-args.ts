import { Command, CommanderError, Option } from "commander";
import {
  collect,
  list,
  readListQuery,
  text,
  UsageError,
  type ListQuery,
  type OptionValues,
} from "./cli-option-values.ts";
import {
  readUsageCommand,
  readWebhooksCommand,
  type UsageCommand,
  type WebhooksCommand,
} from "./parse-account-args.ts";
import { readHarnessCommand, type HarnessCommand } from "./parse-harness-args.ts";

export { UsageError, type ListOrder, type ListQuery } from "./cli-option-values.ts";
export type { UsageCommand, WebhooksCommand } from "./parse-account-args.ts";
export type { HarnessCommand } from "./parse-harness-args.ts";

export const COMMAND_NAMES = [
  "chat",
  "conversations",
  "items",
  "plan",
  "models",
  "usage",
  "webhooks",
  "harness",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export type CliCommand =
  | { name: "help"; topic?: CommandName }
  | { name: "chat"; conversation?: string | undefined; model?: string | undefined; json: boolean }
  | ({ name: "conversations"; json: boolean } & ListQuery)
  | ({ name: "items"; conversationId: string; json: boolean } & ListQuery)
  | PlanCommand
  | ModelsCommand
  | UsageCommand
  | WebhooksCommand
  | HarnessCommand;

export interface CliArgs {
  command: CliCommand;
  /** Flags only; the environment and defaults are applied by resolveConnection. */
  connection: { baseUrl?: string | undefined; apiKey?: string | undefined };
}

function isCommandName(value: string | undefined): value is CommandName {
  return COMMAND_NAMES.some((name) => name === value);
}

function readModel(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "mol" || /^mol:\S+$/.test(raw)) return raw;
  throw new UsageError(`--model must be mol or mol:<label>, got '${raw}'`, "chat");
}

const LIST_OPTIONS = [
  new Option("-n, --limit <value>"),
  new Option("--after <value>"),
  new Option("--order <value>"),
  new Option("--json"),
];

/**
 * The commands and their options, parsed by commander; the texts stay the CLI's own (cli-help.ts, and the messages
 * below), so a usage error reads the same whichever layer found it. Each command collects its operands *and* what
 * commander did not recognise, so that `chat --limit 3` can say that chat takes no --limit instead of a bare
 * "unknown option".
 */
function buildProgram(accept: (command: CliCommand) => void): Command {
  const program = new Command("molmesh")
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined })
    .helpOption(false)
    .helpCommand(false)
    .showSuggestionAfterError(false)
    .allowExcessArguments()
    .allowUnknownOption()
    .option("--base-url <value>")
    .option("--api-key <value>")
    .option("-h, --help")
    .argument("[words...]");
  const wantsHelp = () => program.opts()["help"] === true;

  const define = (
    name: CommandName,
    options: readonly Option[],
    run: (rest: string[], values: OptionValues) => CliCommand,
  ) => {
    const command = program.command(name).allowUnknownOption().argument("[words...]");
    for (const option of options) command.addOption(option);
    command.action((words: string[], values: OptionValues) => {
      if (wantsHelp()) {
        accept({ name: "help", topic: name });
        return;
      }
      rejectUnknownOptions(program, name, words);
      accept(run(words, values));
    });
    return command;
  };

  define("chat", [
    new Option("-c, --conversation <value>"),
    new Option("-m, --model <value>"),
    new Option("--json"),
  ], (rest, values) => {
    if (rest.length > 0) throw new UsageError(`chat takes no arguments, got '${rest.join(" ")}'`, "chat");
    return {
      name: "chat",
      conversation: text(values, "conversation"),
      model: readModel(text(values, "model")),
      json: values["json"] === true,
    };
  });
  define("conversations", LIST_OPTIONS, (rest, values) => {
    if (rest.length > 0) {
      throw new UsageError(`conversations takes no arguments, got '${rest.join(" ")}'`, "conversations");
    }
    return {
      name: "conversations",
      json: values["json"] === true,
      ...readListQuery(values, "conversations"),
    };
  });
  define("items", LIST_OPTIONS, (rest, values) => {
    const [conversationId, ...extra] = rest;
    if (conversationId === undefined) throw new UsageError("items needs a conversation id", "items");
    if (extra.length > 0)
      throw new UsageError(`items takes one conversation id, got '${rest.join(" ")}'`, "items");
    return {
      name: "items",
      conversationId,
      json: values["json"] === true,
      ...readListQuery(values, "items"),
    };
  });
  define("plan", [
    new Option("--spec <value>"),
    new Option("--base <value>"),
    new Option("--adapter <value>").argParser(collect),
    new Option("--specialists <value>"),
    new Option("--slots <value>"),
    new Option("--context <value>"),
    new Option("--json"),
  ], (rest, values) => readPlanCommand(planValues(values), rest));
  define("models", [], (rest) => readModelsCommand(rest));
  define("usage", [
    new Option("--group-by <value>"),
    new Option("--from <value>"),
    new Option("--to <value>"),
    new Option("--csv"),
    new Option("--json"),
  ], (rest, values) => readUsageCommand(rest, values));
  define("webhooks", [
    ...LIST_OPTIONS,
    new Option("--event <value>").argParser(collect),
    new Option("--description <value>"),
  ], (rest, values) => readWebhooksCommand(rest, values));
  define("harness", [
    ...LIST_OPTIONS,
    new Option("--parent <value>"),
    new Option("-m, --message <value>"),
    new Option("--canary <value>"),
    new Option("--percent <value>"),
    new Option("--reason <value>"),
  ], (rest, values) => readHarnessCommand(rest, values));
  program
    .command("help")
    .argument("[words...]")
    .action((words: string[]) => {
      const [topic, ...extra] = words;
      if (topic !== undefined && !isCommandName(topic)) throw new UsageError(`unknown command '${topic}'`);
      if (extra.length > 0) throw new UsageError(`help takes one command, got '${words.join(" ")}'`);
      accept(topic === undefined ? { name: "help" } : { name: "help", topic });
    });
  program.action((words: string[]) => {
    const [first] = words;
    if (first?.startsWith("-") === true && first.length > 1)
      throw new UsageError(`Unknown option '${first.split("=")[0] ?? first}'`);
    if (first !== undefined) throw new UsageError(`unknown command '${first}'`);
    if (!wantsHelp()) throw new UsageError("missing command");
    accept({ name: "help" });
  });
  return program;
}

/** The first option-looking word commander left: another command's option, or nobody's. */
function rejectUnknownOptions(program: Command, name: CommandName, words: readonly string[]): void {
  const word = words.find((w) => w.startsWith("-") && w.length > 1);
  if (word === undefined) return;
  const flag = word.split("=")[0] ?? word;
  const known = program.commands
    .flatMap((command) => command.options)
    .find((option) => option.long === flag || option.short === flag);
  if (known?.long !== undefined) throw new UsageError(`${name} does not take ${known.long}`, name);
  throw new UsageError(`Unknown option '${flag}'`);
}

/** commander's own messages ("error: option '--after <value>' argument missing") as a sentence of the CLI's. */
function toUsageError(error: CommanderError): UsageError {
  const message = error.message.replace(/^error: /, "");
  return new UsageError(message.charAt(0).toUpperCase() + message.slice(1));
}

/** argv after the script name → a command; every mistake is a UsageError naming the command it concerns. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  let command: CliCommand | undefined;
  const program = buildProgram((accepted) => (command = accepted));
  try {
    program.parse([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) throw toUsageError(error);
    throw error;
  }
  if (command === undefined) throw new UsageError("missing command");
  const values = program.opts<{ baseUrl?: string; apiKey?: string }>();
  return { command, connection: { baseUrl: values.baseUrl, apiKey: values.apiKey } };
}

function planValues(values: OptionValues): PlanOptionValues {
  const plan: PlanOptionValues = { json: values["json"] === true };
  for (const name of ["spec", "base", "specialists", "slots", "context"] as const) {
    const value = text(values, name);
    if (value !== undefined) plan[name] = value;
  }
  const adapters = list(values, "adapter");
  if (adapters !== undefined) plan.adapter = adapters;
  return plan;
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
