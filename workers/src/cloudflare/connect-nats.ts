import { credsAuthenticator, wsconnect, type NatsConnection } from "@nats-io/nats-core";
import { NoRespondersError } from "../../../schema/wire/v1/index.ts";

/** A Durable Object drops its NATS connection after this long without a turn, so it can be evicted. */
export const DEFAULT_NATS_IDLE_MS = 60_000;

export interface NatsConnector {
  /** The live connection, opened on first use and reused across turns; reconnects are the client's job. */
  get(): Promise<NatsConnection>;
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
  const idleMs = options.idleMs ?? DEFAULT_NATS_IDLE_MS;

  const close = async (): Promise<void> => {
    const current = connection;
    connection = undefined;
    if (idleTimer) clearTimeout(idleTimer);
    const nc = await current?.catch(() => undefined);
    await nc?.close().catch(() => undefined);
  };

  return {
    async get() {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => void close(), idleMs);
      const current = connection ? await connection.catch(() => undefined) : undefined;
      if (current && !current.isClosed()) return current;
      connection = wsconnect({
        servers: options.url.split(","),
        name: options.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
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

/** The connector for a Durable Object, from the Worker's vars. */
export function connectNatsFromEnv(
  env: { MOL_NATS_WS_URL: string; MOL_NATS_CREDS?: string },
  name: string,
): NatsConnector {
  return createNatsConnector({ url: env.MOL_NATS_WS_URL, name, creds: env.MOL_NATS_CREDS });
}
