import { createServer } from "node:net";

/**
 * Ports are drawn below the OS's ephemeral range (Linux: 32768–60999, macOS/Windows: 49152+). Port 0 would hand out
 * an ephemeral port, which any outgoing connection on the machine may take as its local port before the child
 * process (nats-server, wrangler) binds it — a real flake seen in CI ("Address already in use").
 */
const PORT_RANGE_LOW = 20_000;
const PORT_RANGE_HIGH = 32_000;
const MAX_PORT_ATTEMPTS = 50;
/**
 * Each vitest worker process draws from its own slice of the range (slice 0: any other process), so two test files
 * running at once can never pick the same port in the window between our check and the child's bind.
 */
const SLICE_SIZE = 1_000;
const SLICES = (PORT_RANGE_HIGH - PORT_RANGE_LOW) / SLICE_SIZE;

function readSliceLow(): number {
  const pool = Number(process.env.VITEST_POOL_ID ?? 0);
  const slice = Number.isInteger(pool) && pool > 0 ? 1 + ((pool - 1) % (SLICES - 1)) : 0;
  return PORT_RANGE_LOW + slice * SLICE_SIZE;
}

const handedOut = new Set<number>();

/** Finds a loopback port that is free now and was not handed out before by this process. */
export async function findFreePort(): Promise<number> {
  for (let attempt = 0; attempt < MAX_PORT_ATTEMPTS; attempt++) {
    const port = readSliceLow() + Math.floor(Math.random() * SLICE_SIZE);
    if (handedOut.has(port)) continue;
    if (await canBind(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in the slice from ${readSliceLow()} after ${MAX_PORT_ATTEMPTS} attempts`);
}

async function canBind(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => {
      resolve(false);
    });
    server.listen(port, "127.0.0.1", () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}
