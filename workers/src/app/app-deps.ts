import type { ConversationIndex } from "../conversation/conversation-index.ts";
import type { TenantLimiter } from "../limits/tenant-limits.ts";
import type { ConversationDirectory } from "../core/conversation-core.ts";
import type { FleetHealth } from "../fleet/fleet-view.ts";
import type { GenuiComponentStore } from "../genui/genui-component-store.ts";
import type { HarnessRegistryStore } from "../harness-registry/harness-registry-store.ts";
import type { Principal } from "../tenancy/api-key-scope.ts";
import type { TenantStore } from "../tenancy/tenant-store.ts";
import type { UsageReport } from "../usage/usage-report.ts";
import type { WebhookUrlPolicy } from "../webhooks/check-webhook-url.ts";
import type { WebhookDeliveryLog } from "../webhooks/webhook-queue.ts";
import type { WebhookEndpointStore } from "../webhooks/webhook-endpoint-store.ts";
import type { RequestTelemetry } from "./request-telemetry.ts";
import type { StageClock } from "../lib/stage-timings.ts";

/** Everything the HTTP layer needs, injected per request by the runtime adapter (Cloudflare in production). */
export interface AppDeps {
  conversations: ConversationDirectory;
  conversationIndex: ConversationIndex;
  /** The tenant's request/token buckets and monthly quota. */
  limits(tenantId: string): TenantLimiter;
  readFleetHealth(): Promise<FleetHealth>;
  /** Tenant, key and scopes of a bearer key, or undefined for an unknown, revoked or retired key. */
  authenticate(apiKey: string): Promise<Principal | undefined>;
  tenantStore: TenantStore;
  /** Token usage by key, end user, adapter and day (D1 in production; written by the conversations). */
  usage: UsageReport;
  /** The operator's token for /v1/admin/* (MOL_ADMIN_TOKEN); undefined disables the admin API. */
  adminToken: string | undefined;
  /** Unix ms. */
  now: () => number;
  webhookEndpoints: WebhookEndpointStore;
  /** One endpoint's delivery queue and log. */
  webhookDeliveries(endpointId: string): WebhookDeliveryLog;
  /** SSRF policy for endpoint URLs (loopback only on the local mesh). */
  webhookUrlPolicy: WebhookUrlPolicy;
  /** Validated GenUI components (D1 in production). */
  genuiComponents: GenuiComponentStore;
  /** Harness versions and labels (D1 in production). */
  harnessRegistry: HarnessRegistryStore;
  /** MOL_GENUI_SANDBOX_ORIGIN: where component frames are served; unset on the local mesh (see genui-routes.ts). */
  genuiSandboxOrigin: string | undefined;
  /** MOL_LAUNCH_ID (local launcher only): `/livez` echoes it as `x-mol-launch-id`. */
  launchId?: string | undefined;
  /** Random id with a type prefix (`conv_…`). */
  newId(prefix: string): string;
  /** Where each request's log line goes; default: one JSON line on the console. */
  telemetry?: RequestTelemetry;
}

export type AppEnv = {
  Variables: {
    deps: AppDeps;
    tenantId: string;
    principal: Principal;
    requestId: string;
    /** The request's stage durations, sent back as its `server-timing` header. */
    stages: StageClock;
  };
};
