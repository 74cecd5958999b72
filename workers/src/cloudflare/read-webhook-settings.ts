import { edgeConfigOf, type Env } from "./env.ts";

export interface WebhookSettings {
  /** Scales the retry schedule and `retry-after`; 1 in production. */
  compression: number;
  /** Dev only: lets endpoints point at 127.0.0.1 (the local mesh and its tests). */
  allowLoopback: boolean;
  timeoutMs: number | undefined;
}

/** The webhook vars (see config/edge-config.ts). */
export function readWebhookSettings(env: Env): WebhookSettings {
  const { compression, allowLoopback, timeoutMs } = edgeConfigOf(env).webhooks;
  return { compression, allowLoopback, timeoutMs };
}
