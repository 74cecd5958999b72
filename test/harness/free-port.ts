import { createServer } from "node:net";

/**
 * Ports are drawn below the OS's ephemeral range (Linux: 32768–60999, macOS/Windows: 49152+). Port 0 would hand out
 * an ephemeral port, which any outgoing connection on the machine may take as its local port before the child
 * process (nats-server, wrangler) binds it — a real flake seen in CI ("Address already in use").
 */
const PORT_RANGE_LOW = 20_000;
const PORT_RANGE_HIGH = 32_000;
const MAX_PORT_ATTEMPTS = 50;

const handedOut = new Set<number>();

/** Finds a loopback port that is free now and was not handed out before by this process. */
export async function findFreePort(): Promise<number> {
  for (let attempt = 0; attempt < MAX_PORT_ATTEMPTS; attempt++) {
    const port = PORT_RANGE_LOW + Math.floor(Math.random() * (PORT_RANGE_HIGH - PORT_RANGE_LOW));
    if (handedOut.has(port)) continue;
    if (await canBind(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${PORT_RANGE_LOW}-${PORT_RANGE_HIGH} after ${MAX_PORT_ATTEMPTS} attempts`);
}

async function canBind(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
