import { type CliDeps, createTextStyle } from "./cli-io.ts";
import { formatHelp } from "./cli-help.ts";
import {
  createMeshClient,
  EXIT_FAILURE,
  EXIT_USAGE,
  describeCliError,
  resolveConnection,
  type Connection,
} from "./mesh-client.ts";
import { parseCliArgs, type CliArgs, type PlanCommand, UsageError } from "./parse-cli-args.ts";
import { runUsageCommand, runWebhooksCommand } from "./run-account-commands.ts";
import { runHarnessCommand } from "./run-harness-command.ts";
import { runChat } from "./run-chat.ts";
import { runConversationsCommand, runItemsCommand } from "./run-list-commands.ts";
import { runModelsCommand } from "./run-models-command.ts";
import { runPlanCommand } from "./run-plan-command.ts";

function reportUsageError(error: UsageError, deps: CliDeps): number {
  const helpCommand = error.command === undefined ? "molmesh --help" : `molmesh ${error.command} --help`;
  deps.stderr.write(`molmesh: ${error.message}\n(see ${helpCommand})\n`);
  return EXIT_USAGE;
}

/** `plan` works offline, so a bad MOL_BASE_URL or an unreachable mesh must not stop it. */
async function runOfflinePlan(command: PlanCommand, deps: CliDeps): Promise<number> {
  try {
    return await runPlanCommand(command, deps);
  } catch (error) {
    if (error instanceof UsageError) return reportUsageError(error, deps);
    deps.stderr.write(`molmesh: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILURE;
  }
}

async function runCommand(args: CliArgs, connection: Connection, deps: CliDeps): Promise<number> {
  const { command } = args;
  const client = createMeshClient(connection, deps.fetch);
  const io = { client, stdout: deps.stdout, stderr: deps.stderr };
  switch (command.name) {
    case "help":
      deps.stdout.write(formatHelp(command.topic));
      return 0;
    case "chat":
      return runChat(command, {
        ...io,
        terminal: deps.openTerminal(),
        style: createTextStyle(deps.color),
        baseUrl: connection.baseUrl,
      });
    case "conversations":
      return runConversationsCommand(command, io);
    case "items":
      return runItemsCommand(command, io);
    case "plan":
      return runPlanCommand(command, io);
    case "models":
      return runModelsCommand(command, deps);
    case "usage":
      return runUsageCommand(command, io);
    case "webhooks":
      return runWebhooksCommand(command, io);
    case "harness":
      return runHarnessCommand(command, io);
  }
}

/** The whole CLI as a function of argv and its I/O: returns the exit code, never calls process.exit. */
export async function runMolmesh(argv: readonly string[], deps: CliDeps): Promise<number> {
  if (argv.length === 0) {
    deps.stderr.write(formatHelp());
    return EXIT_USAGE;
  }
  let args: CliArgs;
  let connection: Connection;
  try {
    args = parseCliArgs(argv);
    if (args.command.name === "plan") return await runOfflinePlan(args.command, deps);
    if (args.command.name === "models") return await runModelsCommand(args.command, deps);
    connection = resolveConnection(args.connection, deps.env);
  } catch (error) {
    if (error instanceof UsageError) return reportUsageError(error, deps);
    throw error;
  }
  try {
    return await runCommand(args, connection, deps);
  } catch (error) {
    const report = describeCliError(error, connection.baseUrl);
    deps.stderr.write(`molmesh: ${report.message}\n`);
    return report.exitCode;
  }
}
