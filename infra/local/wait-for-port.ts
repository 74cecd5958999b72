import { connect } from "node:net";

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(
  port: number,
  timeoutMs: number,
  describe: () => string = () => "",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`port ${port} not ready after ${timeoutMs} ms ${describe()}`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
