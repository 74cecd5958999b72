import { z } from "zod";
import { DEFAULT_ADAPTER_IDS, adapterIdSchema, isValidSubjectToken } from "../../../schema/wire/v2/index.ts";

export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";
/** Tokens of KV per slot; the tiny test model and most chat models accept this. */
export const DEFAULT_CONTEXT_SIZE = 4096;
export const DEFAULT_SLOTS_PER_ADAPTER = 4;

/**
 * llama.cpp threads when MOL_THREADS is unset: all cores but one, which stays with Node's event loop (NATS I/O).
 * Measured here on 2 cores: 1 thread decoded the tiny model ~30x faster than 2 (llama.cpp's workers spin).
 */
export function defaultThreadCount(cores: number): number {
  return Math.max(1, Math.min(8, cores - 1));
}

/**
 * Threads for a route hop running alone when MOL_ROUTE_THREADS is unset: every core (up to 8). A route only
 * prefills, which scales with threads; it is short, and the event loop has nothing to do while it runs.
 */
export function defaultRouteThreadCount(cores: number): number {
  return Math.max(1, Math.min(8, cores));
}

const int = (min: number, max: number) => z.coerce.number().pipe(z.int().min(min).max(max));
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

/** Every environment variable the GPU node reads, validated at start. */
export const nodeEnvSchema = z
  .object({
    MOL_NODE_ID: optionalString.refine(
      (v) => v === undefined || isValidSubjectToken(v),
      "use 1-64 chars of [A-Za-z0-9_-]",
    ),
    MOL_NATS_URL: z.string().default(DEFAULT_NATS_URL),
    MOL_NATS_CREDS: optionalString,
    MOL_SUBJECT_PREFIX: z
      .string()
      .refine(isValidSubjectToken, "use 1-64 chars of [A-Za-z0-9_-]")
      .default("molmesh"),
    MOL_ENGINE: z.enum(["embedded", "openai-http"]).default("embedded"),
    MOL_ENGINE_FLAVOR: z.enum(["vllm", "llama-server"]).default("vllm"),
    MOL_ENGINE_URL: optionalString.pipe(z.url().optional()),
    MOL_ENGINE_API_KEY: optionalString,
    MOL_ENGINE_MODEL: optionalString,
    /**
     * openai-http with vLLM: the secret each tenant's `cache_salt` is derived from; the same on every node of one
     * vLLM. Unset: derived from MOL_ENGINE_URL and MOL_ENGINE_MODEL.
     */
    MOL_CACHE_SALT_SECRET: optionalString,
    MOL_BASE_MODEL: optionalString,
    MOL_MODELS_DIR: optionalString,
    MOL_ADAPTERS: z
      .string()
      .default(DEFAULT_ADAPTER_IDS.join(","))
      .transform((v) =>
        v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(z.array(adapterIdSchema).min(1)),
    MOL_ADAPTER_SCALE: z.coerce.number().pipe(z.number().positive().max(8)).default(1),
    MOL_THREADS: int(1, 256).optional(),
    /** llama.cpp threads for a route hop while no other route or answer runs (embedded engine). */
    MOL_ROUTE_THREADS: int(1, 256).optional(),
    MOL_CONTEXT_SIZE: int(64, 1_048_576).default(DEFAULT_CONTEXT_SIZE),
    MOL_SLOTS_PER_ADAPTER: int(1, 256).default(DEFAULT_SLOTS_PER_ADAPTER),
    /** Summary slots per adapter (embedded engine); unset = as many as MOL_SLOTS_PER_ADAPTER. */
    MOL_SUMMARY_SLOTS_PER_ADAPTER: int(0, 256).optional(),
    /** Summaries pause between tokens while a route or answer runs (embedded engine); 0 turns it off. */
    MOL_SUMMARY_YIELD: z.stringbool().default(true),
    /**
     * Most time one summary spends paused for latency hops, in all, before it runs on regardless; each summary
     * also keeps half its hop's time left to run in, and none pauses while another hop waits on it.
     */
    MOL_SUMMARY_MAX_DEFERRAL_MS: int(0, 600_000).default(15_000),
    MOL_MAX_WAITING_PER_ADAPTER: int(0, 1024).optional(),
    MOL_MAX_CONCURRENT: int(1, 4096).default(8),
    /** Summary hops that run at once in their own admission lane; unset = summaries share MOL_MAX_CONCURRENT. */
    MOL_MAX_CONCURRENT_SUMMARIES: int(1, 4096).optional(),
    /** Hops that wait in the node's fair queue, all tenants together; unset = 16 × MOL_MAX_CONCURRENT. */
    MOL_MAX_QUEUED: int(0, 65_536).optional(),
    MOL_HEARTBEAT_INTERVAL_MS: int(100, 60_000).default(2_000),
    MOL_HEARTBEAT_TTL_MS: int(1_000, 600_000).default(10_000),
    /** Prometheus text on `GET /metrics` at this port; 0 (the default) serves none. */
    MOL_METRICS_PORT: int(0, 65_535).default(0),
    MOL_METRICS_HOST: z.string().trim().min(1).default("127.0.0.1"),
    MOL_LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  })
  .superRefine((env, ctx) => {
    if (env.MOL_HEARTBEAT_TTL_MS < 2 * env.MOL_HEARTBEAT_INTERVAL_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["MOL_HEARTBEAT_TTL_MS"],
        message: "must be at least twice MOL_HEARTBEAT_INTERVAL_MS",
      });
    }
  });

/** Checks that depend on which engine is chosen; run on the raw values so they report with the other errors. */
function findMissingEngineSettings(source: Record<string, string | undefined>): string[] {
  const engine = source.MOL_ENGINE?.trim() || "embedded";
  const missing: string[] = [];
  if (engine === "embedded" && !source.MOL_BASE_MODEL?.trim()) {
    missing.push("MOL_BASE_MODEL: required for the embedded engine (a GGUF path or an hf: URI)");
  }
  if (engine === "openai-http" && !source.MOL_ENGINE_URL?.trim()) {
    missing.push("MOL_ENGINE_URL: required for the openai-http engine (e.g. http://127.0.0.1:8000)");
  }
  if (engine === "openai-http" && !source.MOL_ENGINE_MODEL?.trim()) {
    missing.push("MOL_ENGINE_MODEL: required for the openai-http engine (the served base model name)");
  }
  return missing;
}

export interface NodeConfig {
  env: z.infer<typeof nodeEnvSchema>;
  /** Per adapter id: its LoRA path from `MOL_ADAPTER_<ID>`, or undefined for the bare base. */
  adapterPaths: Map<string, string | undefined>;
}

export class ConfigError extends Error {
  override name = "ConfigError";
  readonly code = "invalid_config";
}

/** `chat` → `MOL_ADAPTER_CHAT`; `my-lora` → `MOL_ADAPTER_MY_LORA`. */
export function adapterEnvName(adapterId: string): string {
  return `MOL_ADAPTER_${adapterId.toUpperCase().replace(/-/g, "_")}`;
}

/** Parses the environment; throws one {@link ConfigError} listing every bad variable. */
export function parseNodeConfig(source: Record<string, string | undefined>): NodeConfig {
  const parsed = nodeEnvSchema.safeParse(source);
  const problems = [
    ...findMissingEngineSettings(source),
    ...(parsed.error?.issues.map((i) => `${i.path.join(".") || "(env)"}: ${i.message}`) ?? []),
  ];
  if (!parsed.success || problems.length > 0) {
    throw new ConfigError(`invalid GPU node configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  }
  const adapterPaths = new Map<string, string | undefined>();
  for (const id of parsed.data.MOL_ADAPTERS) {
    const value = source[adapterEnvName(id)]?.trim();
    adapterPaths.set(id, value ? value : undefined);
  }
  return { env: parsed.data, adapterPaths };
}
