import type { ConversationObject } from "./conversation-object.ts";
import type { FleetObject } from "./fleet-object.ts";

/** Bindings and vars of the edge Worker (wrangler.toml). */
export interface Env {
  CONVERSATIONS: DurableObjectNamespace<ConversationObject>;
  FLEET: DurableObjectNamespace<FleetObject>;
  /** Comma-separated NATS WebSocket URLs. */
  MOL_NATS_WS_URL: string;
  MOL_SUBJECT_PREFIX?: string;
  /** The one accepted API key until tenancy lands (a secret in production). */
  MOL_DEV_API_KEY?: string;
}
