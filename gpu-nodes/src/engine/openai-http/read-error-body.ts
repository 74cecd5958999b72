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
