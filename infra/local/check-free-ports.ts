/**
 * The launcher's ports must be free before it spawns anything: a port somebody else holds would otherwise make a
 * child fail late with a log line buried in its output, or worse, make the launcher's readiness probe succeed
 * against the other server.
 */
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";

export interface NeededPort {
  port: number;
  /** What listens there and the variable that moves it: "edge (MOL_EDGE_PORT)". */
  what: string;
  host?: string;
}

/** One or more of the launcher's ports is taken; the message names each, and its holder where `ss` can tell. */
export class PortInUseError extends Error {
  override name = "PortInUseError";
  readonly ports: readonly number[];

  constructor(message: string, ports: readonly number[]) {
    super(message);
    this.ports = ports;
  }
}

/** Binds each port for a moment; a port taken (or not ours to bind) is reported with its holder. */
export async function checkFreePorts(needed: readonly NeededPort[]): Promise<void> {
  const problems: { needed: NeededPort; reason: string }[] = [];
  for (const entry of needed) {
    const reason = await tryBind(entry.port, entry.host ?? "127.0.0.1");
    if (reason !== undefined) problems.push({ needed: entry, reason });
  }
  if (problems.length === 0) return;
  const lines = problems.map(({ needed: { port, what }, reason }) => {
    const holder = reason === "EADDRINUSE" ? describePortHolder(port) : undefined;
    const by = holder === undefined ? "" : ` by ${holder}`;
    return reason === "EADDRINUSE"
      ? `port ${port} for the ${what} is already in use${by}`
      : `port ${port} for the ${what} cannot be bound (${reason})`;
  });
  throw new PortInUseError(
    `${lines.join("; ")}. Stop what holds it or choose another port with the variable named.`,
    problems.map((p) => p.needed.port),
  );
}

function tryBind(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * `pid 1234 (node)` from `ss -ltnp`, which names the process only when it is this user's (or for root); undefined
 * when ss is missing or cannot see it.
 */
export function describePortHolder(port: number): string | undefined {
  let table: string;
  try {
    table = execFileSync("ss", ["-Hltnp", `sport = :${port}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 2_000,
    });
  } catch {
    return undefined;
  }
  const match = /users:\(\("([^"]+)",pid=(\d+)/.exec(table);
  return match === null ? undefined : `pid ${match[2]} (${match[1]})`;
}
