/**
 * What every command's parsing shares: the usage error, option values as commander hands them over, and the paging
 * flags of the list commands.
 */

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

export type ListOrder = "asc" | "desc";

export interface ListQuery {
  limit?: number;
  after?: string;
  order?: ListOrder;
}

/** The server's page bounds (1–100), checked here so a typo costs no request. */
const MAX_LIMIT = 100;

/** Option values as commander hands them to an action (strings, booleans, the --adapter/--event lists). */
export type OptionValues = Record<string, string | boolean | string[] | undefined>;
export const text = (values: OptionValues, name: string): string | undefined =>
  typeof values[name] === "string" ? values[name] : undefined;
export const list = (values: OptionValues, name: string): string[] | undefined =>
  Array.isArray(values[name]) ? values[name] : undefined;
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function readLimit(raw: string | undefined, command: string): number | undefined {
  if (raw === undefined) return undefined;
  const limit = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, got '${raw}'`, command);
  }
  return limit;
}

function readOrder(raw: string | undefined, command: string): ListOrder | undefined {
  if (raw === undefined || raw === "asc" || raw === "desc") return raw;
  throw new UsageError(`--order must be asc or desc, got '${raw}'`, command);
}

export function readListQuery(values: OptionValues, command: string): ListQuery {
  const query: ListQuery = {};
  const limit = readLimit(text(values, "limit"), command);
  const order = readOrder(text(values, "order"), command);
  const after = text(values, "after");
  if (limit !== undefined) query.limit = limit;
  if (after !== undefined) query.after = after;
  if (order !== undefined) query.order = order;
  return query;
}
