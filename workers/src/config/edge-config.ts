import { z } from "zod";
import { DEFAULT_SUBJECT_PREFIX, isValidSubjectToken } from "../../../schema/wire/v2/index.ts";
import type { HopTimeouts } from "../generate/generate-deps.ts";
import type { TenantLimitSettings } from "../limits/tenant-limits.ts";

/**
 * The edge Worker's `MOL_*` vars and secrets (wrangler.toml `[vars]`, `wrangler secret put`, `--var`), read and
 * checked in one place. Bindings (DB, the Durable Object namespaces, MOL_ANALYTICS) and OTEL_* are not vars: the
 * reader leaves them alone.
 *
 * An empty value is unset (wrangler vars often are ""); anything else that does not parse is an error, as is an
 * unknown `MOL_*` name: a typo must not quietly leave a deployment on a default.
 */

/** setTimeout fires at once past 2^31 − 1 ms, so no delay may be longer. */
const MAX_TIMER_MS = 2_147_483_647;

/** Every default, by variable: the docs' configuration table and the tests show these. */
export const EDGE_CONFIG_DEFAULTS = {
  MOL_SUBJECT_PREFIX: DEFAULT_SUBJECT_PREFIX,
  /** A Durable Object drops its NATS connection after this long with no hop in flight, so it can be evicted. */
  MOL_NATS_IDLE_MS: 60_000,
  MOL_PLACEMENT: "affinity",
  /** How long a node stays in this edge's fleet without a heartbeat (the bucket's TTL also removes it). */
  MOL_FLEET_STALE_MS: 10_000,
  /**
   * How long a conversation object reuses the fleet's node list it last read: a turn places several hops within
   * a second, and heartbeats come every two, so a fresher read would find the same nodes.
   */
  MOL_PLACEMENT_CACHE_MS: 1_000,
  /** A node that has not sent its `start` part by then is taken as hung; the hop goes to another node. */
  MOL_HOP_FIRST_PART_TIMEOUT_MS: 3_000,
  /**
   * Silence between answer parts after which the node is taken as lost and another continues the answer: nodes
   * send a keepalive part every second, so three seconds of nothing is a dead or hung node.
   */
  MOL_HOP_STALL_TIMEOUT_MS: 3_000,
  /** Per-attempt deadline of the one-message hops (route, summary) before they fail over. */
  MOL_HOP_REPLY_TIMEOUT_MS: 10_000,
  /** Per-tenant limits when neither a var nor the tenant's overrides set them: generous for one developer. */
  MOL_DEFAULT_RPM: 600,
  MOL_DEFAULT_TPM: 2_000_000,
  MOL_DEFAULT_MONTHLY_TOKENS: 1_000_000_000,
  MOL_WEBHOOK_RETRY_COMPRESSION: 1,
  MOL_WEBHOOK_ALLOW_LOOPBACK: false,
} as const;

/** MOL_* names that are bindings, not vars: known, so not typos, and not the reader's to check. */
const EDGE_MOL_BINDINGS: ReadonlySet<string> = new Set(["MOL_ANALYTICS"]);

/** Vars whose values never appear in an error message: the message goes to logs. */
const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  "MOL_NATS_CREDS",
  "MOL_ADMIN_TOKEN",
  "MOL_DEV_API_KEY",
  "MOL_WEBHOOK_SECRET_KEY",
]);

/** `min`…`max` written in decimal digits: "1e4", "3000.0" and "-1" are mistakes worth a failed start. */
const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .refine((v) => /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max, {
      message: `must be a whole number from ${min} to ${max}`,
    })
    .transform(Number);
const milliseconds = (min: number) => wholeNumber(min, MAX_TIMER_MS);
const perTenantLimit = wholeNumber(1, Number.MAX_SAFE_INTEGER);

const webSocketUrls = z
  .string({ error: "required: the NATS WebSocket URLs, comma-separated (ws://… or wss://…)" })
  .transform((value, ctx) => {
    const servers = value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = servers.find((s) => !["ws:", "wss:"].includes(parseUrl(s)?.protocol ?? ""));
    if (servers.length === 0 || bad !== undefined) {
      ctx.issues.push({
        code: "custom",
        input: value,
        message:
          bad === undefined
            ? "lists no URL"
            : `${JSON.stringify(bad)} is not a ws:// or wss:// URL (comma-separated list)`,
      });
      return z.NEVER;
    }
    return servers;
  });

/** The frames' origin; `resolveSandboxOrigin` reads only the origin, so a path or a trailing slash is dropped. */
const httpOrigin = z.string().transform((value, ctx) => {
  const url = parseUrl(value);
  if (url?.protocol !== "https:" && url?.protocol !== "http:") {
    ctx.issues.push({ code: "custom", input: value, message: "must be an http:// or https:// origin" });
    return z.NEVER;
  }
  return url.origin;
});

/** Checked here rather than at the first sealed secret, which would fail one webhook request instead of the start. */
const aesKeyBase64 = z.string().refine(
  (v) => {
    try {
      return atob(v.trim()).length === 32;
    } catch {
      return false;
    }
  },
  { message: "must be 32 bytes in base64 (openssl rand -base64 32)" },
);

const d = EDGE_CONFIG_DEFAULTS;

/** Every var the edge reads, from trimmed strings; an unset or blank var is undefined (see {@link readEdgeConfig}). */
const edgeEnvSchema = z
  .object({
    MOL_NATS_WS_URL: webSocketUrls,
    MOL_SUBJECT_PREFIX: z
      .string()
      .refine(isValidSubjectToken, "must be 1-64 chars of [A-Za-z0-9_-], the same as the GPU nodes'")
      .default(d.MOL_SUBJECT_PREFIX),
    MOL_NATS_CREDS: z.string().optional(),
    MOL_NATS_IDLE_MS: milliseconds(1).default(d.MOL_NATS_IDLE_MS),
    MOL_PLACEMENT: z
      .enum(["affinity", "queue-group"], { error: 'must be "affinity" or "queue-group"' })
      .default(d.MOL_PLACEMENT),
    MOL_FLEET_STALE_MS: milliseconds(1).default(d.MOL_FLEET_STALE_MS),
    MOL_PLACEMENT_CACHE_MS: milliseconds(0).default(d.MOL_PLACEMENT_CACHE_MS),
    MOL_HOP_FIRST_PART_TIMEOUT_MS: milliseconds(1).default(d.MOL_HOP_FIRST_PART_TIMEOUT_MS),
    MOL_HOP_STALL_TIMEOUT_MS: milliseconds(1).default(d.MOL_HOP_STALL_TIMEOUT_MS),
    MOL_HOP_REPLY_TIMEOUT_MS: milliseconds(1).default(d.MOL_HOP_REPLY_TIMEOUT_MS),
    MOL_HARNESS: z.string().optional(),
    MOL_DEFAULT_RPM: perTenantLimit.default(d.MOL_DEFAULT_RPM),
    MOL_DEFAULT_TPM: perTenantLimit.default(d.MOL_DEFAULT_TPM),
    MOL_DEFAULT_MONTHLY_TOKENS: perTenantLimit.default(d.MOL_DEFAULT_MONTHLY_TOKENS),
    MOL_DEFAULT_WPM: perTenantLimit.optional(),
    MOL_DEV_API_KEY: z.string().optional(),
    MOL_ADMIN_TOKEN: z.string().optional(),
    MOL_WEBHOOK_RETRY_COMPRESSION: z
      .string()
      .refine((v) => Number(v) > 0 && Number(v) <= 1, { message: "must be a number with 0 < x ≤ 1" })
      .transform(Number)
      .default(d.MOL_WEBHOOK_RETRY_COMPRESSION),
    MOL_WEBHOOK_ALLOW_LOOPBACK: z
      .enum(["true", "false"], { error: 'must be "true" or "false"' })
      .transform((v) => v === "true")
      .default(d.MOL_WEBHOOK_ALLOW_LOOPBACK),
    MOL_WEBHOOK_SECRET_KEY: aesKeyBase64.optional(),
    MOL_WEBHOOK_TIMEOUT_MS: milliseconds(1).optional(),
    MOL_GENUI_SANDBOX_ORIGIN: httpOrigin.optional(),
    MOL_LAUNCH_ID: z.string().optional(),
    /** Lenient on purpose: only "debug" means anything; other levels are the default. */
    MOL_LOG_LEVEL: z.string().optional(),
  })
  .superRefine((env, ctx) => {
    if (env.MOL_PLACEMENT_CACHE_MS >= env.MOL_FLEET_STALE_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["MOL_PLACEMENT_CACHE_MS"],
        message: "must be less than MOL_FLEET_STALE_MS, or placement would pick nodes already gone",
      });
    }
  });

/** The names of every var {@link readEdgeConfig} reads. */
export const EDGE_VARIABLES: readonly string[] = Object.keys(edgeEnvSchema.shape);

export interface EdgeConfig {
  nats: {
    /** MOL_NATS_WS_URL: the client spreads over them and fails over. */
    servers: string[];
    /** MOL_SUBJECT_PREFIX: the first subject token, the same as the GPU nodes'. */
    subjectPrefix: string;
    /** MOL_NATS_CREDS: the edge's `.creds` file contents; unset for an anonymous nats-server. */
    creds: string | undefined;
    /** MOL_NATS_IDLE_MS. */
    idleMs: number;
  };
  placement: {
    /** MOL_PLACEMENT: "queue-group" lets NATS pick any node (a benchmark baseline). */
    mode: "affinity" | "queue-group";
    /** MOL_FLEET_STALE_MS. */
    fleetStaleMs: number;
    /** MOL_PLACEMENT_CACHE_MS; 0 reads the fleet for every hop. */
    cacheMs: number;
  };
  /** MOL_HOP_FIRST_PART_TIMEOUT_MS, MOL_HOP_STALL_TIMEOUT_MS, MOL_HOP_REPLY_TIMEOUT_MS. */
  hopTimeouts: HopTimeouts;
  /** MOL_HARNESS as it is: the conversation object parses it, and an invalid one is logged and ignored there. */
  harness: string | undefined;
  /** MOL_DEFAULT_RPM/TPM/MONTHLY_TOKENS/WPM, under each tenant's overrides; no writesPerMinute = requestsPerMinute. */
  limits: TenantLimitSettings;
  access: {
    /** MOL_DEV_API_KEY: the local mesh's full-scope key of the `dev` tenant. */
    devApiKey: string | undefined;
    /** MOL_ADMIN_TOKEN: unset disables the admin API. */
    adminToken: string | undefined;
  };
  webhooks: {
    /** MOL_WEBHOOK_RETRY_COMPRESSION: scales the retry schedule and `retry-after`; 1 outside tests. */
    compression: number;
    /** MOL_WEBHOOK_ALLOW_LOOPBACK: admits 127.0.0.1 receivers (the local mesh only). */
    allowLoopback: boolean;
    /** MOL_WEBHOOK_TIMEOUT_MS; unset, the delivery's own default (DEFAULT_WEBHOOK_TIMEOUT_MS). */
    timeoutMs: number | undefined;
    /** MOL_WEBHOOK_SECRET_KEY: seals signing secrets at rest; unset stores them as they are. */
    secretKey: string | undefined;
  };
  genui: {
    /** MOL_GENUI_SANDBOX_ORIGIN, as an origin; unset, loopback requests use genui-sandbox.localhost. */
    sandboxOrigin: string | undefined;
  };
  logging: {
    /** MOL_LOG_LEVEL=debug: request bodies in the request log lines. */
    debug: boolean;
  };
  /** MOL_LAUNCH_ID: set by the local launcher, echoed by `/livez`. */
  launchId: string | undefined;
}

export interface EdgeConfigProblem {
  variable: string;
  message: string;
}

/** A bad edge configuration; `variable` names the first bad var, `problems` lists them all. */
export class EdgeConfigError extends Error {
  override name = "EdgeConfigError";
  readonly code = "invalid_config";
  readonly variable: string;
  readonly problems: readonly EdgeConfigProblem[];

  constructor(problems: readonly [EdgeConfigProblem, ...EdgeConfigProblem[]]) {
    super(problems.map((p) => p.message).join("\n"));
    this.variable = problems[0].variable;
    this.problems = problems;
  }
}

/**
 * Reads and checks every `MOL_*` var of the Worker's env; throws an {@link EdgeConfigError} listing every bad one.
 * `env` is an `object` so that the `Env` interface passes as it is (an interface has no index signature).
 */
export function readEdgeConfig(env: object): EdgeConfig {
  const source = env as Record<string, unknown>;
  const problems: EdgeConfigProblem[] = [];
  const problem = (variable: string, why: string) =>
    problems.push({
      variable,
      message: `${variable}: ${why} (${describeValue(variable, source[variable])})`,
    });

  const values: Record<string, string | undefined> = {};
  for (const [name, raw] of Object.entries(source)) {
    if (!name.startsWith("MOL_") || EDGE_MOL_BINDINGS.has(name)) continue;
    if (!EDGE_VARIABLES.includes(name)) {
      const near = closestVariable(name);
      problem(name, `unknown edge variable${near ? `; did you mean ${near}?` : ""}`);
      continue;
    }
    // `wrangler.toml` vars may be TOML numbers or booleans, which reach the Worker as such.
    const text = typeof raw === "number" || typeof raw === "boolean" ? String(raw) : raw;
    if (text !== undefined && typeof text !== "string") problem(name, "must be a string");
    else values[name] = text?.trim() || undefined;
  }
  const parsed = edgeEnvSchema.safeParse(values);
  for (const issue of parsed.error?.issues ?? []) problem(String(issue.path[0] ?? "(env)"), issue.message);

  const [first, ...rest] = problems;
  if (first) throw new EdgeConfigError([first, ...rest]);
  if (!parsed.success) throw parsed.error; // unreachable: every issue is a problem
  const e = parsed.data;
  return {
    nats: {
      servers: e.MOL_NATS_WS_URL,
      subjectPrefix: e.MOL_SUBJECT_PREFIX,
      creds: e.MOL_NATS_CREDS,
      idleMs: e.MOL_NATS_IDLE_MS,
    },
    placement: {
      mode: e.MOL_PLACEMENT,
      fleetStaleMs: e.MOL_FLEET_STALE_MS,
      cacheMs: e.MOL_PLACEMENT_CACHE_MS,
    },
    hopTimeouts: {
      firstPartMs: e.MOL_HOP_FIRST_PART_TIMEOUT_MS,
      stallMs: e.MOL_HOP_STALL_TIMEOUT_MS,
      replyMs: e.MOL_HOP_REPLY_TIMEOUT_MS,
    },
    harness: e.MOL_HARNESS,
    limits: {
      requestsPerMinute: e.MOL_DEFAULT_RPM,
      tokensPerMinute: e.MOL_DEFAULT_TPM,
      monthlyTokens: e.MOL_DEFAULT_MONTHLY_TOKENS,
      ...(e.MOL_DEFAULT_WPM === undefined ? {} : { writesPerMinute: e.MOL_DEFAULT_WPM }),
    },
    access: { devApiKey: e.MOL_DEV_API_KEY, adminToken: e.MOL_ADMIN_TOKEN },
    webhooks: {
      compression: e.MOL_WEBHOOK_RETRY_COMPRESSION,
      allowLoopback: e.MOL_WEBHOOK_ALLOW_LOOPBACK,
      timeoutMs: e.MOL_WEBHOOK_TIMEOUT_MS,
      secretKey: e.MOL_WEBHOOK_SECRET_KEY,
    },
    genui: { sandboxOrigin: e.MOL_GENUI_SANDBOX_ORIGIN },
    logging: { debug: e.MOL_LOG_LEVEL === "debug" },
    launchId: e.MOL_LAUNCH_ID,
  };
}

/**
 * `got "…"`, or only the length where the value may be a secret: a known secret, or an unknown name (a
 * misspelled secret is still a secret).
 */
function describeValue(variable: string, raw: unknown): string {
  if (raw === undefined) return "unset";
  if (typeof raw !== "string" && typeof raw !== "number" && typeof raw !== "boolean")
    return `got ${typeof raw}`;
  const text = String(raw);
  if (SECRET_VARIABLES.has(variable) || !EDGE_VARIABLES.includes(variable))
    return `got a hidden value of ${text.length} chars`;
  return `got ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`;
}

/** `new URL`, or undefined; URL.canParse is missing from the Workers types. */
function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** The known var a typo most likely meant: at most three edits away. */
function closestVariable(name: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const known of EDGE_VARIABLES) {
    const distance = editDistance(name, known);
    if (distance <= 3 && distance < (best?.distance ?? Infinity)) best = { name: known, distance };
  }
  return best?.name;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}
