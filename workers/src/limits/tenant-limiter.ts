import type { Admission } from "./tenant-limits.ts";

/** One tenant's limits as the API sees them (a Durable Object per tenant in production: exact, not approximate). */
export interface TenantLimiter {
  admit(): Promise<Admission>;
  refund(): Promise<void>;
  record(tokens: number): Promise<void>;
}
