import { credsAuthenticator, type NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { generateDevCredentials, readAccountsTemplate } from "../../infra/nats/generate-dev-credentials.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";

export interface SecuredNatsServer {
  server: NatsServerHandle;
  /** The `.creds` text of a user (edge, admin, sys or a node id). */
  credsOf(user: string): string;
  /** Connects over TCP (the node transport) as `user`; rejects when the server refuses the login. */
  connectAs(user: string): Promise<NatsConnection>;
  dispose(): Promise<void>;
}

/**
 * Starts a real nats-server on loopback with the PRODUCTION accounts, users and permissions
 * (infra/nats/cluster/accounts.conf, filled with fresh nkeys by the same generator as the deployments) on top of
 * the local listeners of infra/nats/local.conf: the production server files add only TLS, clustering and limits,
 * none of which changes who may publish or subscribe to what.
 */
export async function startSecuredNatsServer(nodeIds: readonly string[]): Promise<SecuredNatsServer> {
  const { accountsConf, creds } = generateDevCredentials(await readAccountsTemplate(), nodeIds);
  const server = await startNatsServer({ extraConfig: accountsConf });
  const credsOf = (user: string): string => {
    const text = creds.get(user);
    if (!text) throw new Error(`no credentials for user "${user}"`);
    return text;
  };
  return {
    server,
    credsOf,
    connectAs: (user) =>
      connect({
        servers: server.url,
        name: user,
        authenticator: credsAuthenticator(new TextEncoder().encode(credsOf(user))),
        maxReconnectAttempts: 0,
      }),
    dispose: () => server.dispose(),
  };
}
