import { UsageError } from "./usage-error.ts";

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
