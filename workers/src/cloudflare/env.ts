import { readEdgeConfig, type EdgeConfig } from "../config/edge-config.ts";

/**
 * Bindings and vars of the edge Worker (wrangler.toml). The namespaces stay untyped here so the object classes
 * can import this file without a cycle; `index.ts` types the stubs where it creates them.
 */
export interface Env {
  CONVERSATIONS: DurableObjectNamespace;
  FLEET: DurableObjectNamespace;
  DB: D1Database;
  LIMITS: DurableObjectNamespace;
  /** One delivery queue per webhook endpoint (WebhookEndpointObject). */
  WEBHOOKS: DurableObjectNamespace;
  /** Per-tenant defaults: requests and tokens per minute, tokens per calendar month. */
  MOL_DEFAULT_RPM?: string;
  MOL_DEFAULT_TPM?: string;
  MOL_DEFAULT_MONTHLY_TOKENS?: string;
  /** Writes that start no turn (conversations, webhook endpoints) per minute; default: MOL_DEFAULT_RPM's value. */
  MOL_DEFAULT_WPM?: string;
  /** Comma-separated NATS WebSocket URLs. */
  MOL_NATS_WS_URL: string;
  MOL_SUBJECT_PREFIX?: string;
  /** The edge's NATS `.creds` file contents (a secret); unset for the local mesh's anonymous nats-server. */
  MOL_NATS_CREDS?: string;
  /** Placement and failover tuning (ms); every MOL_* var's default and check: config/edge-config.ts. */
  MOL_FLEET_STALE_MS?: string;
  /** "affinity" (default) or "queue-group" (no placement: NATS picks any node; a benchmark baseline). */
  MOL_PLACEMENT?: string;
  /**
   * A harness document (JSON, possibly partial) laid over the per-model defaults: prompts, budgets, templates.
   * Validated with harnessDocumentSchema; an invalid one is logged and ignored.
   */
  MOL_HARNESS?: string;
  MOL_HOP_FIRST_PART_TIMEOUT_MS?: string;
  MOL_HOP_STALL_TIMEOUT_MS?: string;
  MOL_HOP_REPLY_TIMEOUT_MS?: string;
  /** How long a Durable Object keeps an idle NATS connection (ms). */
  MOL_NATS_IDLE_MS?: string;
  /** How long a conversation object reuses the node list it last read from its colo's fleet object (ms). */
  MOL_PLACEMENT_CACHE_MS?: string;
  /**
   * The local mesh's key: when set, this exact string is a full-scope key of the `dev` tenant, stored in D1 on
   * first use. Leave it unset in production, where keys come from the admin API.
   */
  MOL_DEV_API_KEY?: string;
  /** The operator's token for /v1/admin/* (a secret in production); unset disables the admin API. */
  MOL_ADMIN_TOKEN?: string;
  /** Multiplies the webhook retry schedule (0 < x ≤ 1); e.g. 0.001 turns 3.5 days into ~5 minutes. Tests only. */
  MOL_WEBHOOK_RETRY_COMPRESSION?: string;
  /** "true" admits loopback webhook URLs (a receiver on 127.0.0.1); never in production. */
  MOL_WEBHOOK_ALLOW_LOOPBACK?: string;
  /**
   * 32 random bytes in base64 (a secret): webhook signing secrets are stored AES-GCM-sealed with it. Unset (the local
   * mesh), they are stored as they are.
   */
  MOL_WEBHOOK_SECRET_KEY?: string;
  /** How long a receiver gets to answer one attempt (default 15 s). */
  MOL_WEBHOOK_TIMEOUT_MS?: string;
  /** The origin GenUI frames are served from (its own hostname); unset, loopback requests use genui-sandbox.localhost. */
  MOL_GENUI_SANDBOX_ORIGIN?: string;
  /** Set by the local launcher per start, echoed by `/livez` so it knows the server on its port is the one it ran. */
  MOL_LAUNCH_ID?: string;
  /** "debug" adds request bodies to the request log lines; anything else (the default) keeps message text out. */
  MOL_LOG_LEVEL?: string;
  /**
   * Workers Analytics Engine dataset for per-request data points (route, status, tenant, duration); bound in
   * production (wrangler.toml `analytics_engine_datasets`), absent locally.
   */
  MOL_ANALYTICS?: AnalyticsEngineDataset;
  /** OTLP/HTTP collector base URL (`/v1/traces` is appended); unset exports no spans. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** The full traces URL, when it is not `<endpoint>/v1/traces`. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  /** `key=value,…` headers for the collector (a secret when it holds a token). */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_SERVICE_NAME?: string;
}

const configs = new WeakMap<object, EdgeConfig>();

/**
 * The edge's config from the Worker's env (readEdgeConfig), read once per env object: an isolate's requests and
 * objects share one env, so the vars are checked once, not on every request.
 */
export function edgeConfigOf(env: Env): EdgeConfig {
  let config = configs.get(env);
  if (!config) configs.set(env, (config = readEdgeConfig(env)));
  return config;
}
