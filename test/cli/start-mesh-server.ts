import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { recordRequest, type MeshHandler, type RecordedRequest } from "./recording-fetch.ts";

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A real HTTP server on a free loopback port answering from `handle`, for the CLI run as a child process. A
 * client that goes away aborts the request's signal and cancels the body, as the edge sees a disconnect.
 */
export async function startMeshServer(handle: MeshHandler) {
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming, outgoing) => {
    const disconnected = new AbortController();
    outgoing.on("close", () => {
      if (!outgoing.writableFinished) disconnected.abort();
    });
    void (async () => {
      const body = await readBody(incoming);
      const request = new Request(`http://${incoming.headers.host ?? "localhost"}${incoming.url ?? "/"}`, {
        method: incoming.method ?? "GET",
        headers: Object.entries(incoming.headers).flatMap(([name, value]) =>
          typeof value === "string" ? [[name, value] as [string, string]] : [],
        ),
        signal: disconnected.signal,
        ...(body === "" ? {} : { body }),
      });
      const recorded = await recordRequest(request);
      requests.push(recorded);
      const response = await handle(recorded);
      outgoing.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) return outgoing.end();
      const reader = response.body.getReader();
      disconnected.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined));
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done || value === undefined) break;
        outgoing.write(value);
      }
      outgoing.end();
    })().catch((error: unknown) => {
      outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
