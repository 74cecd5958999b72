import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  EDGE_CONFIG_DEFAULTS,
  EDGE_VARIABLES,
  EdgeConfigError,
  readEdgeConfig,
  type EdgeConfig,
} from "../../workers/src/config/edge-config.ts";

const NATS = "ws://127.0.0.1:8089";
const AES_KEY = btoa("k".repeat(32));

/** The defaults, from the one var without one. */
const DEFAULT_CONFIG: EdgeConfig = {
  nats: { servers: [NATS], subjectPrefix: "molmesh", creds: undefined, idleMs: 60_000 },
  placement: { mode: "affinity", fleetStaleMs: 10_000, cacheMs: 1_000 },
  hopTimeouts: { firstPartMs: 3_000, stallMs: 3_000, replyMs: 10_000 },
  harness: undefined,
  limits: { requestsPerMinute: 600, tokensPerMinute: 2_000_000, monthlyTokens: 1_000_000_000 },
  access: { devApiKey: undefined, adminToken: undefined },
  webhooks: { compression: 1, allowLoopback: false, timeoutMs: undefined, secretKey: undefined },
  genui: { sandboxOrigin: undefined },
  logging: { debug: false },
  launchId: undefined,
};

/** The error `readEdgeConfig` throws for `env` (on top of a valid NATS URL). */
function configError(env: Record<string, unknown>): EdgeConfigError {
  try {
    readEdgeConfig({ MOL_NATS_WS_URL: NATS, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(EdgeConfigError);
    return error as EdgeConfigError;
  }
  return expect.unreachable(`accepted ${JSON.stringify(env)}`);
}

describe("edge configuration", () => {
  it("fills every default from a minimal env, and ignores bindings and non-MOL vars", () => {
    const config = readEdgeConfig({
      MOL_NATS_WS_URL: NATS,
      DB: {},
      CONVERSATIONS: {},
      MOL_ANALYTICS: { writeDataPoint: () => undefined },
      OTEL_SERVICE_NAME: "edge",
      SOMETHING_ELSE: 42,
    });
    expect(config).toEqual(DEFAULT_CONFIG);
    expect(EDGE_CONFIG_DEFAULTS).toMatchObject({ MOL_PLACEMENT_CACHE_MS: 1_000, MOL_NATS_IDLE_MS: 60_000 });
  });

  it("reads every variable", () => {
    const env = {
      MOL_NATS_WS_URL: "wss://nats-1.example.com, wss://nats-2.example.com:8443,",
      MOL_SUBJECT_PREFIX: "mesh_2",
      MOL_NATS_CREDS: "-----BEGIN NATS USER JWT-----\n…\n",
      MOL_NATS_IDLE_MS: "30000",
      MOL_PLACEMENT: "queue-group",
      MOL_FLEET_STALE_MS: "20000",
      MOL_PLACEMENT_CACHE_MS: "0",
      MOL_HOP_FIRST_PART_TIMEOUT_MS: "4000",
      MOL_HOP_STALL_TIMEOUT_MS: "5000",
      MOL_HOP_REPLY_TIMEOUT_MS: "6000",
      MOL_HARNESS: '{"contextTokens":8192}',
      MOL_DEFAULT_RPM: "60",
      MOL_DEFAULT_TPM: "100000",
      MOL_DEFAULT_MONTHLY_TOKENS: "5000000",
      MOL_DEFAULT_WPM: "30",
      MOL_DEV_API_KEY: "sk-molmesh-dev-local",
      MOL_ADMIN_TOKEN: "mol-admin",
      MOL_WEBHOOK_RETRY_COMPRESSION: "0.001",
      MOL_WEBHOOK_ALLOW_LOOPBACK: "true",
      MOL_WEBHOOK_SECRET_KEY: AES_KEY,
      MOL_WEBHOOK_TIMEOUT_MS: "2000",
      MOL_GENUI_SANDBOX_ORIGIN: "https://genui.example-usercontent.com/",
      MOL_LAUNCH_ID: "launch-1",
      MOL_LOG_LEVEL: "debug",
    };
    expect(Object.keys(env).sort()).toEqual([...EDGE_VARIABLES].sort());
    expect(readEdgeConfig(env)).toEqual({
      nats: {
        servers: ["wss://nats-1.example.com", "wss://nats-2.example.com:8443"],
        subjectPrefix: "mesh_2",
        creds: "-----BEGIN NATS USER JWT-----\n…",
        idleMs: 30_000,
      },
      placement: { mode: "queue-group", fleetStaleMs: 20_000, cacheMs: 0 },
      hopTimeouts: { firstPartMs: 4_000, stallMs: 5_000, replyMs: 6_000 },
      harness: '{"contextTokens":8192}',
      limits: {
        requestsPerMinute: 60,
        tokensPerMinute: 100_000,
        monthlyTokens: 5_000_000,
        writesPerMinute: 30,
      },
      access: { devApiKey: "sk-molmesh-dev-local", adminToken: "mol-admin" },
      webhooks: { compression: 0.001, allowLoopback: true, timeoutMs: 2_000, secretKey: AES_KEY },
      genui: { sandboxOrigin: "https://genui.example-usercontent.com" },
      logging: { debug: true },
      launchId: "launch-1",
    } satisfies EdgeConfig);
  });

  it("knows every MOL_ name of the Worker's Env", () => {
    const envFile = readFileSync(new URL("../../workers/src/cloudflare/env.ts", import.meta.url), "utf8");
    const names = [...envFile.matchAll(/^\s*(MOL_[A-Z0-9_]+)\??:/gm)].map((m) => m[1] ?? "");
    expect(names.length).toBeGreaterThan(20);
    const env = Object.fromEntries(names.map((name) => [name, undefined]));
    expect(() => readEdgeConfig({ ...env, MOL_NATS_WS_URL: NATS })).not.toThrow();
  });

  it("takes empty and blank strings as unset", () => {
    const blank = Object.fromEntries(EDGE_VARIABLES.map((name) => [name, name.endsWith("_MS") ? "  " : ""]));
    expect(readEdgeConfig({ ...blank, MOL_NATS_WS_URL: NATS })).toEqual(DEFAULT_CONFIG);
    expect(configError({ MOL_NATS_WS_URL: "" }).message).toBe(
      'MOL_NATS_WS_URL: required: the NATS WebSocket URLs, comma-separated (ws://… or wss://…) (got "")',
    );
    expect(() => readEdgeConfig({})).toThrow(/^MOL_NATS_WS_URL: required.*\(unset\)$/);
  });

  it("takes wrangler.toml's numbers and booleans as their text", () => {
    const config = readEdgeConfig({
      MOL_NATS_WS_URL: NATS,
      MOL_FLEET_STALE_MS: 5_000,
      MOL_WEBHOOK_ALLOW_LOOPBACK: true,
    });
    expect(config.placement.fleetStaleMs).toBe(5_000);
    expect(config.webhooks.allowLoopback).toBe(true);
    expect(configError({ MOL_HARNESS: { router: {} } }).message).toBe(
      "MOL_HARNESS: must be a string (got object)",
    );
  });

  it("rejects a malformed number, naming the variable and its value", () => {
    for (const [name, value] of [
      ["MOL_FLEET_STALE_MS", "10s"],
      ["MOL_HOP_STALL_TIMEOUT_MS", "0"],
      ["MOL_HOP_REPLY_TIMEOUT_MS", "-1"],
      ["MOL_HOP_FIRST_PART_TIMEOUT_MS", "1.5"],
      ["MOL_NATS_IDLE_MS", "1e4"],
      ["MOL_WEBHOOK_TIMEOUT_MS", "9999999999"],
      ["MOL_PLACEMENT_CACHE_MS", "-5"],
    ] as const) {
      const error = configError({ [name]: value });
      expect(error.variable).toBe(name);
      expect(error.message).toMatch(
        new RegExp(`^${name}: must be a whole number from [01] to 2147483647 \\(got "${value}"\\)$`),
      );
    }
    for (const name of [
      "MOL_DEFAULT_RPM",
      "MOL_DEFAULT_TPM",
      "MOL_DEFAULT_MONTHLY_TOKENS",
      "MOL_DEFAULT_WPM",
    ]) {
      expect(configError({ [name]: "0" }).message).toBe(
        `${name}: must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER} (got "0")`,
      );
    }
  });

  it("rejects a value outside its enum", () => {
    expect(configError({ MOL_PLACEMENT: "random" }).message).toBe(
      'MOL_PLACEMENT: must be "affinity" or "queue-group" (got "random")',
    );
    expect(configError({ MOL_WEBHOOK_ALLOW_LOOPBACK: "yes" }).message).toBe(
      'MOL_WEBHOOK_ALLOW_LOOPBACK: must be "true" or "false" (got "yes")',
    );
    expect(configError({ MOL_SUBJECT_PREFIX: "mol.mesh" }).variable).toBe("MOL_SUBJECT_PREFIX");
  });

  it("rejects a malformed URL", () => {
    for (const value of ["genui.example.com", "ftp://genui.example.com", "javascript:alert(1)"]) {
      const error = configError({ MOL_GENUI_SANDBOX_ORIGIN: value });
      expect(error.variable).toBe("MOL_GENUI_SANDBOX_ORIGIN");
      expect(error.message).toBe(
        `MOL_GENUI_SANDBOX_ORIGIN: must be an http:// or https:// origin (got ${JSON.stringify(value)})`,
      );
    }
    expect(configError({ MOL_NATS_WS_URL: "wss://a.example.com,http://b.example.com" }).message).toBe(
      'MOL_NATS_WS_URL: "http://b.example.com" is not a ws:// or wss:// URL (comma-separated list) (got "wss://a.example.com,http://b.example.com")',
    );
    expect(configError({ MOL_NATS_WS_URL: " , " }).message).toMatch(/^MOL_NATS_WS_URL: lists no URL/);
  });

  it("rejects a retry compression outside 0 < x ≤ 1", () => {
    for (const value of ["0", "1.5", "-0.1", "fast"]) {
      const error = configError({ MOL_WEBHOOK_RETRY_COMPRESSION: value });
      expect(error.variable).toBe("MOL_WEBHOOK_RETRY_COMPRESSION");
      expect(error.message).toBe(
        `MOL_WEBHOOK_RETRY_COMPRESSION: must be a number with 0 < x ≤ 1 (got "${value}")`,
      );
    }
  });

  it("rejects a placement cache that outlives the fleet's staleness", () => {
    const error = configError({ MOL_FLEET_STALE_MS: "2000", MOL_PLACEMENT_CACHE_MS: "2000" });
    expect(error.variable).toBe("MOL_PLACEMENT_CACHE_MS");
    expect(error.message).toMatch(/must be less than MOL_FLEET_STALE_MS/);
  });

  it("rejects a webhook secret key that is not 32 bytes, without printing it", () => {
    const error = configError({ MOL_WEBHOOK_SECRET_KEY: btoa("short-secret") });
    expect(error.message).toBe(
      "MOL_WEBHOOK_SECRET_KEY: must be 32 bytes in base64 (openssl rand -base64 32) (got a hidden value of 16 chars)",
    );
  });

  it("rejects an unknown MOL_ variable, suggesting the one it likely meant without printing its value", () => {
    const typo = configError({ MOL_PLACMENT: "queue-group" });
    expect(typo.variable).toBe("MOL_PLACMENT");
    expect(typo.message).toBe(
      "MOL_PLACMENT: unknown edge variable; did you mean MOL_PLACEMENT? (got a hidden value of 11 chars)",
    );
    expect(configError({ MOL_SOMETHING_NEW: "1" }).message).toBe(
      "MOL_SOMETHING_NEW: unknown edge variable (got a hidden value of 1 chars)",
    );
  });

  it("lists every bad variable at once, naming the first", () => {
    const error = configError({ MOL_PLACMENT: "x", MOL_FLEET_STALE_MS: "soon", MOL_PLACEMENT: "any" });
    expect(error.variable).toBe("MOL_PLACMENT");
    expect(error.problems.map((p) => p.variable)).toEqual([
      "MOL_PLACMENT",
      "MOL_PLACEMENT",
      "MOL_FLEET_STALE_MS",
    ]);
    expect(error.message.split("\n")).toHaveLength(3);
  });

  it("keeps MOL_LOG_LEVEL lenient: only debug means anything", () => {
    for (const [value, debug] of [
      ["debug", true],
      ["info", false],
      ["verbose", false],
    ] as const)
      expect(readEdgeConfig({ MOL_NATS_WS_URL: NATS, MOL_LOG_LEVEL: value }).logging.debug).toBe(debug);
  });
});
