import type { ListQuery } from "./parse-cli-args.ts";

/** Only what the user set, so the server's own defaults (limit 20, desc) apply otherwise. */
export function buildListQuery(query: ListQuery): Record<string, string | number> {
  const built: Record<string, string | number> = {};
  if (query.limit !== undefined) built["limit"] = query.limit;
  if (query.after !== undefined) built["after"] = query.after;
  if (query.order !== undefined) built["order"] = query.order;
  return built;
}
