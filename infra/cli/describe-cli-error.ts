import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { UsageError } from "./usage-error.ts";

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** 128 + SIGINT, what shells report for a command stopped by Ctrl-C. */
export const EXIT_INTERRUPTED = 130;

export interface CliErrorReport {
  message: string;
  exitCode: number;
  /** The HTTP status when the API answered with an error envelope. */
  httpStatus?: number;
  /** The envelope's `code` (`conversation_not_found`, `no_responders`, …) or a stream event's. */
  code?: string;
}

/** The innermost cause says what went wrong on the network (`connect ECONNREFUSED 127.0.0.1:8787`). */
function readRootCause(error: unknown): string | undefined {
  let current = error;
  let message: string | undefined;
  for (let depth = 0; current instanceof Error && depth < 8; depth++) {
    message = current.message;
    current = current.cause;
  }
  return message;
}

function describeApiError(error: APIError): CliErrorReport {
  const envelope: unknown = error.error;
  const envelopeMessage =
    typeof envelope === "object" &&
    envelope !== null &&
    "message" in envelope &&
    typeof envelope.message === "string"
      ? envelope.message
      : undefined;
  // The request id is what an operator greps the edge's logs for.
  const facts = [
    error.code,
    error.status === undefined ? undefined : `HTTP ${error.status}`,
    typeof error.requestID === "string" ? `request ${error.requestID}` : undefined,
  ]
    .filter((fact) => typeof fact === "string" && fact !== "")
    .join(", ");
  const report: CliErrorReport = {
    message: `${envelopeMessage ?? error.message}${facts === "" ? "" : ` (${facts})`}`,
    exitCode: EXIT_FAILURE,
  };
  if (error.status !== undefined) report.httpStatus = error.status;
  if (typeof error.code === "string") report.code = error.code;
  return report;
}

/** Any failure as one line for a person and an exit code for a script. */
export function describeCliError(error: unknown, baseUrl: string): CliErrorReport {
  if (error instanceof UsageError) return { message: error.message, exitCode: EXIT_USAGE };
  if (error instanceof APIUserAbortError) {
    return { message: "cancelled", exitCode: EXIT_INTERRUPTED, code: "cancelled" };
  }
  if (error instanceof APIConnectionError) {
    const cause = readRootCause(error.cause) ?? error.message;
    return { message: `cannot reach ${baseUrl}: ${cause}`, exitCode: EXIT_FAILURE, code: "connection_error" };
  }
  if (error instanceof APIError) return describeApiError(error);
  return { message: error instanceof Error ? error.message : String(error), exitCode: EXIT_FAILURE };
}
