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
