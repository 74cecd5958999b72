import {
  CancelledError,
  ContextLengthExceededError,
  EngineFailureError,
  MolWireError,
  OverloadedError,
  UnknownAdapterError,
} from "../../../../schema/wire/v2/index.ts";

export interface EngineHttpRequest {
  method: "GET" | "POST";
  /** Serialized as JSON when present. */
  body?: unknown;
  signal?: AbortSignal;
  accept?: string;
}

export interface EngineHttpClient {
  /** Network failures reject as thrown by the injected fetch; callers decide how to map them. */
  send(path: string, request: EngineHttpRequest): Promise<Response>;
}

export function createEngineHttpClient(options: {
  fetch: typeof fetch;
  baseUrl: string;
  apiKey?: string | undefined;
}): EngineHttpClient {
  const root = options.baseUrl.replace(/\/+$/, "");
  return {
    send(path, request) {
      const headers: Record<string, string> = { accept: request.accept ?? "application/json" };
      if (request.body !== undefined) headers["content-type"] = "application/json";
      if (options.apiKey !== undefined) headers["authorization"] = `Bearer ${options.apiKey}`;
      const init: RequestInit = { method: request.method, headers };
      if (request.body !== undefined) init.body = JSON.stringify(request.body);
      if (request.signal !== undefined) init.signal = request.signal;
      return options.fetch(`${root}${path}`, init);
    },
  };
}

export interface EngineErrorBody {
  message: string;
  type?: string;
  code?: number | string;
}

const MAX_RAW_CHARS = 500;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readFields(record: Record<string, unknown>, fallback: string): EngineErrorBody {
  const body: EngineErrorBody = {
    message: typeof record["message"] === "string" ? record["message"] : fallback,
  };
  if (typeof record["type"] === "string") body.type = record["type"];
  const code = record["code"];
  if (typeof code === "number" || typeof code === "string") body.code = code;
  return body;
}

/**
 * Error bodies differ by server and version: vLLM ≥0.10 and llama-server nest `{error:{message,type,code}}`,
 * older vLLM sends the same fields flat (`object:"error"`), FastAPI itself answers `{detail}` (unknown
 * route, validation), and proxies may send plain text. Read whichever arrived.
 */
export function readErrorBody(text: string): EngineErrorBody {
  const raw = text.trim().slice(0, MAX_RAW_CHARS);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: raw || "(empty body)" };
  }
  if (!isRecord(parsed)) return { message: raw };
  const error = parsed["error"];
  if (isRecord(error)) return readFields(error, raw);
  if (typeof error === "string") return { message: error };
  if (typeof parsed["message"] === "string") return readFields(parsed, raw);
  const detail = parsed["detail"];
  if (detail !== undefined) return { message: typeof detail === "string" ? detail : JSON.stringify(detail) };
  return { message: raw };
}

// vLLM: "This model's maximum context length is …", "… is longer than the maximum model length of …";
// llama-server: "request (N tokens) exceeds the available context size (M tokens)" / exceed_context_size_error.
const CONTEXT_LENGTH_PATTERN =
  /maximum context length|maximum model length|exceeds the available context size|context_length_exceeded|exceed_context_size/i;
// vLLM: "The model `x` does not exist."
const MODEL_NOT_FOUND_PATTERN = /model .* does not exist|NotFoundError|model_not_found/i;

function describe(body: EngineErrorBody): string {
  return [body.message, body.type, typeof body.code === "string" ? body.code : ""].join(" ");
}

/** Maps an engine error (HTTP status, or the `code` of an error sent inside the stream) to a wire error. */
export function mapEngineError(status: number, body: EngineErrorBody): MolWireError {
  const message = `engine answered ${status}: ${body.message}`;
  const text = describe(body);
  if (status >= 400 && status < 500 && CONTEXT_LENGTH_PATTERN.test(text)) {
    return new ContextLengthExceededError(message);
  }
  if (status === 404 || (status === 400 && MODEL_NOT_FOUND_PATTERN.test(text))) {
    return new UnknownAdapterError(message);
  }
  if (status === 429 || status === 503) return new OverloadedError(message);
  // A request the engine rejects as malformed fails the same way on every node: retrying cannot help.
  if (status === 400 || status === 422) return new EngineFailureError(message, { retryable: false });
  return new EngineFailureError(message);
}

export function mapHttpError(status: number, bodyText: string): MolWireError {
  return mapEngineError(status, readErrorBody(bodyText));
}

/** The caller aborts with a typed reason (deadline, cancel) and expects that same error back. */
/** A function, not an inline check, so the compiler does not carry an earlier `aborted` result past an await. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw toAbortError(signal);
}

export function toAbortError(signal: AbortSignal): MolWireError {
  const reason: unknown = signal.reason;
  if (reason instanceof MolWireError) return reason;
  return new CancelledError("generation was cancelled", { cause: reason });
}
