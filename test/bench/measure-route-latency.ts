import type { NatsConnection } from "@nats-io/nats-core";
import { requestRoute } from "../harness/generate-requests.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";

/**
 * Route hop latency as the requester sees it (NATS round trip included): `routes` short route hops over
 * `slots` conversations, one at a time. Returns each hop's milliseconds, in order.
 */
export async function measureRouteLatency(
  client: NatsConnection,
  routes: number,
  slots: number,
): Promise<number[]> {
  const routeMs: number[] = [];
  for (let i = 0; i < routes; i++) {
    const started = performance.now();
    await requestRoute(client, {
      requestId: `bench-route-${i}`,
      slotKey: `bench-route-${i % slots}`,
      prompt: `<route>\nuser: request ${i} about ${["code", "a plan", "a widget", "hello"][i % 4]}\nlabel: `,
      timeoutMs: 10_000,
    });
    routeMs.push(performance.now() - started);
    if ((i + 1) % 10 === 0) reportBenchProgress("route latency", i + 1, routes);
  }
  return routeMs;
}
