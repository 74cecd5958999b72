import { credsAuthenticator, wsconnect, type NatsConnection } from "@nats-io/nats-core";
import type { GenerateClient } from "../nats/generate-client.ts";
import { NoRespondersError } from "../../../schema/wire/v2/index.ts";
import { EDGE_CONFIG_DEFAULTS, type EdgeConfig } from "../config/edge-config.ts";

/** A Durable Object drops its NATS connection after this long with no hop in flight, so it can be evicted. */
export const DEFAULT_NATS_IDLE_MS = EDGE_CONFIG_DEFAULTS.MOL_NATS_IDLE_MS;

export interface NatsConnector {
  /** The live connection, opened on first use and reused across turns; reconnects are the client's job. */
  get(): Promise<NatsConnection>;
  /**
   * Keeps the connection open until the returned release is called: a hop that waits longer than the idle time
   * for its reply (a long prefill, a long answer) must not lose its connection under it.
   */
  hold(): () => void;
  close(): Promise<void>;
}

/**
 * NATS from workerd goes through the server's WebSocket listener (`wsconnect`): the TCP transport cannot run in
 * Workers. An outbound WebSocket pins the object in memory, hence the idle close.
 */
export function createNatsConnector(options: {
  url: string;
  name: string;
  idleMs?: number;
  /** Contents of the edge's `.creds` file (production NATS refuses anonymous clients). */
  creds?: string | undefined;
}): NatsConnector {
  let connection: Promise<NatsConnection> | undefined;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let held = 0;
  const idleMs = options.idleMs ?? DEFAULT_NATS_IDLE_MS;
  // The idle clock runs only while nothing holds the connection.
  const rearm = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = held > 0 ? undefined : setTimeout(() => void close(), idleMs);
  };

  const close = async (): Promise<void> => {
    const current = connection;
    connection = undefined;
    if (idleTimer) clearTimeout(idleTimer);
    const nc = await current?.catch(() => undefined);
    await nc?.close().catch(() => undefined);
  };

  return {
    hold() {
      held++;
      rearm();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held--;
        rearm();
      };
    },
    async get() {
      rearm();
      const current = connection ? await connection.catch(() => undefined) : undefined;
      if (current && !current.isClosed()) return current;
      connection = wsconnect({
        servers: options.url.split(","),
        name: options.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        // Each request would build an Error up front to carry its caller's stack: a stack capture per hop on the
        // edge's CPU (seen in a workerd profile); our errors are typed and carry their own context.
        noAsyncTraces: true,
        ...(options.creds
          ? { authenticator: credsAuthenticator(new TextEncoder().encode(options.creds)) }
          : {}),
      });
      try {
        return await connection;
      } catch (cause) {
        connection = undefined;
        throw new NoRespondersError(`cannot reach NATS at ${options.url}`, { cause });
      }
    },
    close,
  };
}

/** The generate calls, each holding the connection open from its request until its last reply part (or failure). */
export function holdConnectionDuringHops(connector: NatsConnector, client: GenerateClient): GenerateClient {
  return {
    generate: async (input, options) => {
      const release = connector.hold();
      try {
        return await client.generate(input, options);
      } finally {
        release();
      }
    },
    async *stream(input, options) {
      const release = connector.hold();
      try {
        yield* client.stream(input, options);
      } finally {
        release();
      }
    },
  };
}

/** The connector for a Durable Object, from the edge's config. */
export function connectNatsFromConfig(config: Pick<EdgeConfig, "nats">, name: string): NatsConnector {
  return createNatsConnector({
    url: config.nats.servers.join(","),
    name,
    creds: config.nats.creds,
    idleMs: config.nats.idleMs,
  });
}
