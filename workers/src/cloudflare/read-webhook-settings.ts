import type { Env } from "./env.ts";

export interface WebhookSettings {
  /** Scales the retry schedule and `retry-after`; 1 in production. */
  compression: number;
  /** Dev only: lets endpoints point at 127.0.0.1 (the local mesh and its tests). */
  allowLoopback: boolean;
  timeoutMs: number | undefined;
}

/** Reads the webhook vars (see env.ts); bad values fall back to the production defaults. */
export function readWebhookSettings(env: Env): WebhookSettings {
  const compression = Number(env.MOL_WEBHOOK_RETRY_COMPRESSION);
  const timeoutMs = Number(env.MOL_WEBHOOK_TIMEOUT_MS);
  return {
    compression: Number.isFinite(compression) && compression > 0 && compression <= 1 ? compression : 1,
    allowLoopback: env.MOL_WEBHOOK_ALLOW_LOOPBACK === "true",
    timeoutMs: Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : undefined,
  };
}
