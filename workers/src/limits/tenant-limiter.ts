import type { Admission, TenantLimitSettings } from "./tenant-limits.ts";

/** One tenant's limits as the API sees them (a Durable Object per tenant in production: exact, not approximate). */
export interface TenantLimiter {
  admit(): Promise<Admission>;
  refund(): Promise<void>;
  record(tokens: number): Promise<void>;
  /** The tenant's limits: the deployment's defaults with this tenant's overrides (its plan) on top. */
  readLimits(): Promise<TenantLimitSettings>;
  /** Sets (or, with `null` values, clears) this tenant's overrides; returns the limits now in force. */
  setLimits(
    overrides: Partial<Record<keyof TenantLimitSettings, number | null>>,
  ): Promise<TenantLimitSettings>;
}
