import { readFile } from "node:fs/promises";
import {
  describeSpecIssues,
  planSpecSchema,
  type PlanSpec,
} from "../../gpu-nodes/tools/planner/plan-spec.ts";
import { UsageError } from "./usage-error.ts";

/** A spec file that is missing, not JSON or not a spec is the caller's mistake: a UsageError (exit 2). */
export async function readPlanSpec(path: string): Promise<PlanSpec> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read spec ${path}${code === "ENOENT" ? ": no such file" : `: ${code}`}`,
      "plan",
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error: unknown) {
    throw new UsageError(`spec ${path} is not JSON: ${(error as Error).message}`, "plan");
  }
  const parsed = planSpecSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`bad spec ${path}: ${describeSpecIssues(parsed.error)}`, "plan");
  return parsed.data;
}
