import { createApp } from "../app/create-app.ts";
import type { AppDeps } from "../app/app-deps.ts";
import { authenticateApiKey } from "../tenancy/authenticate-api-key.ts";
import { KeyLookupCache, cacheKeyLookups } from "../tenancy/cache-key-lookups.ts";
import { createConversationHandle } from "./conversation-handle.ts";
import { createD1ConversationIndex } from "./d1-conversation-index.ts";
import { createD1GenuiComponentStore } from "./d1-genui-component-store.ts";
import { createD1HarnessRegistryStore } from "./d1-harness-registry-store.ts";
import { harnessRegistryCaches } from "./harness-registry-caches.ts";
import { cacheHarnessRegistry } from "../harness-registry/choose-turn-harness.ts";
import { createD1TenantStore } from "./d1-tenant-store.ts";
import { createD1UsageStore } from "./d1-usage-store.ts";
import { edgeConfigOf, type Env } from "./env.ts";
import { openWebhookEndpointStore } from "./open-webhook-endpoint-store.ts";
import { ensureEdgeTracing, flushEdgeTracing } from "./edge-tracing.ts";
import type { RequestLogLine, RequestTelemetry } from "../app/request-telemetry.ts";
import type { HopTraceContext } from "../../../schema/wire/v2/index.ts";

import type { ConversationObject } from "./conversation-object.ts";
import { fleetObjectName, type FleetObject } from "./fleet-object.ts";
import type { TenantLimiterObject } from "./tenant-limiter-object.ts";
import type { WebhookEndpointObject } from "./webhook-endpoint-object.ts";

export { ConversationObject } from "./conversation-object.ts";
export { FleetObject } from "./fleet-object.ts";
export { TenantLimiterObject } from "./tenant-limiter-object.ts";
export { WebhookEndpointObject } from "./webhook-endpoint-object.ts";

/** The isolate's key lookups: requests served here share them (see cache-key-lookups.ts). */
const keyLookups = new KeyLookupCache(() => Date.now());

function resolveDeps(env: unknown, request: { trace: HopTraceContext; raw: Request }): AppDeps {
  const bindings = env as Env;
  const config = edgeConfigOf(bindings);
  const tenantStore = cacheKeyLookups(createD1TenantStore(bindings.DB), keyLookups);
  // The colo this Worker runs in: its fleet object places the hops of the conversations it reaches.
  const colo = readColo(request.raw);
  return {
    // A conversation's object is named under its tenant: another tenant's key can never reach it.
    conversations: (tenantId, conversationId) =>
      createConversationHandle(
        bindings.CONVERSATIONS.getByName(
          `${tenantId}:${conversationId}`,
        ) as DurableObjectStub<ConversationObject>,
        request.trace,
        colo,
      ),
    conversationIndex: createD1ConversationIndex(bindings.DB),
    limits: (tenantId) => bindings.LIMITS.getByName(tenantId) as DurableObjectStub<TenantLimiterObject>,
    readFleetHealth: () =>
      (bindings.FLEET.getByName(fleetObjectName(colo)) as DurableObjectStub<FleetObject>).health(),
    authenticate: (apiKey) =>
      authenticateApiKey(apiKey, {
        store: tenantStore,
        devApiKey: config.access.devApiKey,
        now: Date.now(),
      }),
    tenantStore,
    usage: createD1UsageStore(bindings.DB, Date.now),
    adminToken: config.access.adminToken,
    webhookEndpoints: openWebhookEndpointStore(bindings),
    webhookDeliveries: (endpointId) =>
      bindings.WEBHOOKS.getByName(endpointId) as DurableObjectStub<WebhookEndpointObject>,
    webhookUrlPolicy: { allowLoopback: config.webhooks.allowLoopback },
    genuiComponents: createD1GenuiComponentStore(bindings.DB),
    genuiSandboxOrigin: config.genui.sandboxOrigin,
    harnessRegistry: cacheHarnessRegistry(createD1HarnessRegistryStore(bindings.DB), harnessRegistryCaches),
    launchId: config.launchId,
    now: () => Date.now(),
    newId: (prefix) => `${prefix}_${crypto.randomUUID().replace(/-/g, "")}`,
    telemetry: createTelemetry(bindings, config.logging.debug),
  };
}

/**
 * Request lines go to the console (`wrangler dev`'s terminal, `wrangler tail`, Workers Logs); with an Analytics
 * Engine binding each request is also one data point, so usage and errors by tenant and route can be queried
 * with SQL instead of parsed from logs.
 */
function createTelemetry(env: Env, debug: boolean): RequestTelemetry {
  return {
    debug,
    write(line: RequestLogLine) {
      const text = JSON.stringify(line);
      if (line.level === "error") console.error(text);
      else if (line.level === "warn") console.warn(text);
      else console.log(text);
      env.MOL_ANALYTICS?.writeDataPoint({
        indexes: [line.tenantId ?? ""],
        blobs: [line.route, line.method, String(line.status), line.errorCode ?? "", line.keyId ?? ""],
        doubles: [line.durationMs, line.status],
      });
    },
    afterResponse: flushEdgeTracing,
  };
}

/** `request.cf.colo` (three letters, e.g. "AMS"); absent outside Cloudflare's network (tests, `wrangler dev`). */
function readColo(request: Request): string | undefined {
  const colo = (request as { cf?: { colo?: unknown } }).cf?.colo;
  return typeof colo === "string" && colo !== "" ? colo : undefined;
}

const app = createApp(resolveDeps);

export default {
  // The tracer provider must exist before the app opens the request's span; env only arrives with a request.
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    ensureEdgeTracing(env);
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
