import type { z } from "zod";
import { ApiError } from "./api-error.ts";

type Issue = z.core.$ZodIssue;

/** OpenAI writes paths as `messages[0].content`; so do we, so client code that reads `param` keeps working. */
export function formatParamPath(path: readonly PropertyKey[]): string | null {
  let param = "";
  for (const key of path) {
    if (typeof key === "number") param += `[${key}]`;
    else param += param === "" ? String(key) : `.${String(key)}`;
  }
  return param === "" ? null : param;
}

function codeOf(issue: Issue): string {
  if (issue.code === "unrecognized_keys") return "unknown_parameter";
  if (issue.code === "invalid_type") {
    return issue.message.endsWith("received undefined") ? "missing_required_parameter" : "invalid_type";
  }
  return "invalid_value";
}

/**
 * A union (`string | parts[]`) reports every branch. The branch the value had the right type for says what is
 * actually wrong, deeper down; if no branch took the type, name the types that would have been accepted.
 */
function unwrapUnion(issue: Issue): Issue {
  if (issue.code !== "invalid_union") return issue;
  const typeMismatch = (branch: readonly Issue[]) =>
    branch.every((inner) => inner.code === "invalid_type" && inner.path.length === 0);
  const branch = issue.errors.find((candidate) => candidate.length > 0 && !typeMismatch(candidate));
  const inner = branch?.[0];
  if (inner === undefined) {
    const expected = issue.errors.flatMap((candidate) =>
      candidate.flatMap((inner) => (inner.code === "invalid_type" ? [inner.expected] : [])),
    );
    return expected.length === 0
      ? issue
      : { ...issue, message: `Invalid input: expected ${expected.join(" or ")}` };
  }
  return unwrapUnion({ ...inner, path: [...issue.path, ...inner.path] });
}

/** A 400 that blames the first failing field; the other issues follow in the message, so one round trip shows all. */
export function createValidationError(issues: readonly Issue[]): ApiError {
  const [outer, ...rest] = issues;
  if (outer === undefined) {
    return new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_value",
      message: "invalid request",
    });
  }
  const first = unwrapUnion(outer);
  const path = first.code === "unrecognized_keys" ? [...first.path, ...first.keys.slice(0, 1)] : first.path;
  const param = formatParamPath(path);
  const headline =
    first.code === "unrecognized_keys"
      ? `Unrecognized request argument supplied: ${first.keys.join(", ")}`
      : param === null
        ? first.message
        : `Invalid '${param}': ${first.message}`;
  const more = rest.length === 0 ? "" : ` (and ${rest.length} more issue${rest.length === 1 ? "" : "s"})`;
  return new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: codeOf(first),
    param,
    message: headline + more,
  });
}
