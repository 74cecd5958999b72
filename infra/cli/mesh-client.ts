import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { z } from "zod";
import type { FetchLike } from "./cli-io.ts";
import { UsageError, type ListQuery } from "./parse-cli-args.ts";
import { molSchema } from "../../schema/api/mol.ts";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";
/** The key `npm start` sets for the local mesh when MOL_DEV_API_KEY is unset. */
export const DEFAULT_DEV_API_KEY = "sk-molmesh-dev-local";

export interface Connection {
  /** The mesh root, without a trailing slash or `/v1`. */
  baseUrl: string;
  apiKey: string;
}

/** Flags win over the environment, which wins over the local-mesh defaults. */
export function resolveConnection(
  flags: { baseUrl?: string | undefined; apiKey?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): Connection {
  const raw = flags.baseUrl ?? nonEmpty(env["MOL_BASE_URL"]) ?? DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--base-url is not a URL: '${raw}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--base-url must be http(s), got '${raw}'`);
  }
  // People paste the OpenAI-style base URL too; the client adds /v1 itself.
  const baseUrl = url.href.replace(/\/+$/, "").replace(/\/v1$/, "");
  const apiKey =
    flags.apiKey ?? nonEmpty(env["MOL_API_KEY"]) ?? nonEmpty(env["MOL_DEV_API_KEY"]) ?? DEFAULT_DEV_API_KEY;
  return { baseUrl, apiKey };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The official client pointed at the mesh. No retries: a retried turn would be a second turn, and a person at
 * a prompt is better served by the error at once than by a silent wait.
 */
export function createMeshClient(connection: Connection, fetch: FetchLike): OpenAI {
  return new OpenAI({
    baseURL: `${connection.baseUrl}/v1`,
    apiKey: connection.apiKey,
    fetch,
    maxRetries: 0,
    // A turn streams for as long as the answer takes; the mesh enforces its own hop deadlines.
    timeout: 10 * 60_000,
  });
}

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

/** What is read off an APIError; `instanceof` on an unknown types its generics as any, this keeps them typed. */
type ApiErrorFacts = Pick<APIError, "message" | "error" | "code" | "status" | "requestID">;

function describeApiError(error: ApiErrorFacts): CliErrorReport {
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

/** The server answered 2xx with a body that is not what a molmesh sends: the wrong URL, or a proxy's page. */
export class ResponseShapeError extends Error {
  override name = "ResponseShapeError";
}

/** zod's first issue, said in the CLI's words; `what` names the body (`item list`, `stream event`, …). */
export function parseResponseShape<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  throw new ResponseShapeError(`unexpected ${what} from the server${where}: ${issue?.message ?? "invalid"}`);
}

/** OpenAI's cursor page: `{object: "list", data, first_id, last_id, has_more}`. */
export function createListSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    object: z.literal("list"),
    data: z.array(item),
    first_id: z.string().nullish(),
    last_id: z.string().nullish(),
    has_more: z.boolean(),
  });
}

/** Only what the user set, so the server's own defaults (limit 20, desc) apply otherwise. */
export function buildListQuery(query: ListQuery): Record<string, string | number> {
  const built: Record<string, string | number> = {};
  if (query.limit !== undefined) built["limit"] = query.limit;
  if (query.after !== undefined) built["after"] = query.after;
  if (query.order !== undefined) built["order"] = query.order;
  return built;
}

/** The final Response a stream ends with (`response.completed`, `.incomplete` or `.failed`). */
export const responseSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  usage: z
    .looseObject({
      input_tokens: z.number(),
      input_tokens_details: z.looseObject({ cached_tokens: z.number() }).optional(),
      output_tokens: z.number(),
    })
    .nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string() }).nullish(),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullish(),
  // The edge's own schema; loose, so --json passes on facts a newer mesh adds.
  mol: molSchema.loose().optional(),
});
export type MeshResponse = z.infer<typeof responseSchema>;

/** A conversation item: a user message, or an assistant message with its `mol` facts. */
export const itemSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  role: z.string().optional(),
  status: z.string().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional(),
  // The edge's own schema; loose, so --json passes on facts a newer mesh adds.
  mol: molSchema.loose().optional(),
});
export type Item = z.infer<typeof itemSchema>;

export const conversationSchema = z.looseObject({
  id: z.string(),
  object: z.literal("conversation"),
  /** Unix seconds. */
  created_at: z.number(),
  metadata: z.record(z.string(), z.string()).nullish(),
});
export type Conversation = z.infer<typeof conversationSchema>;
