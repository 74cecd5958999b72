import type { CliDeps } from "./cli-io.ts";
import { formatHelp } from "./cli-help.ts";
import { createMeshClient } from "./create-mesh-client.ts";
import { EXIT_USAGE, describeCliError } from "./describe-cli-error.ts";
import { parseCliArgs, type CliArgs } from "./parse-cli-args.ts";
import { resolveConnection, type Connection } from "./resolve-connection.ts";
import { runChat } from "./run-chat.ts";
import { runConversationsCommand } from "./run-conversations-command.ts";
import { runItemsCommand } from "./run-items-command.ts";
import { createTextStyle } from "./text-style.ts";
import { UsageError } from "./usage-error.ts";

function reportUsageError(error: UsageError, deps: CliDeps): number {
  const helpCommand = error.command === undefined ? "molmesh --help" : `molmesh ${error.command} --help`;
  deps.stderr.write(`molmesh: ${error.message}\n(see ${helpCommand})\n`);
  return EXIT_USAGE;
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
