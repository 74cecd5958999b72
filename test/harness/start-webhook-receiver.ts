import { createServer, type IncomingHttpHeaders } from "node:http";
import { findFreePort } from "./free-port.ts";

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered. */
  status: number;
  at: number;
}

export type ReceiverReply = { status: number; headers?: Record<string, string> };

/**
 * A real HTTP server standing in for a tenant's webhook receiver: it records every request and answers what
 * `reply` decides (fail the first attempts, answer 410, …).
 */
export async function startWebhookReceiver(
  reply: (request: { body: string; headers: IncomingHttpHeaders; index: number }) => ReceiverReply = () => ({
    status: 200,
  }),
) {
  const received: ReceivedWebhook[] = [];
  let decide = reply;
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      const answer = decide({ body, headers: req.headers, index: received.length });
      received.push({ headers: req.headers, body, status: answer.status, at: Date.now() });
      res.writeHead(answer.status, answer.headers ?? {}).end();
    });
  });
  const port = await findFreePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Changes how later requests are answered. */
    setReply(next: typeof reply) {
      decide = next;
    },
    /** Resolves once `predicate` holds over what was received, polling. */
    async waitFor(predicate: (all: ReceivedWebhook[]) => boolean, timeoutMs = 60_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}
