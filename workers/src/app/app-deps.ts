import type { ConversationIndex } from "../conversation/conversation-index.ts";
import type { TenantLimiter } from "../limits/tenant-limiter.ts";
import type { ConversationDirectory } from "../conversation/conversation-rpc.ts";
import type { FleetHealth } from "../fleet/fleet-health.ts";

/** Everything the HTTP layer needs, injected per request by the runtime adapter (Cloudflare in production). */
export interface AppDeps {
  conversations: ConversationDirectory;
  conversationIndex: ConversationIndex;
  /** The tenant's request/token buckets and monthly quota. */
  limits(tenantId: string): TenantLimiter;
  readFleetHealth(): Promise<FleetHealth>;
  /** Tenant of a bearer key, or undefined for an unknown key. */
  authenticate(apiKey: string): Promise<{ tenantId: string } | undefined>;
  /** Unix ms. */
  now(): number;
  /** Random id with a type prefix (`conv_…`). */
  newId(prefix: string): string;
}

export type AppEnv = { Variables: { deps: AppDeps; tenantId: string; requestId: string } };
