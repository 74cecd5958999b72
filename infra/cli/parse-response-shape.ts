import type { z } from "zod";
import { ResponseShapeError } from "./response-shape-error.ts";

/** zod's first issue, said in the CLI's words; `what` names the body (`item list`, `stream event`, …). */
export function parseResponseShape<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  throw new ResponseShapeError(`unexpected ${what} from the server${where}: ${issue?.message ?? "invalid"}`);
}
