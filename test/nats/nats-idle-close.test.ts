import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createNatsConnector } from "../../workers/src/cloudflare/connect-nats.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";

/**
 * The Durable Object's NATS connection closes when idle, but never under a hop in flight: a genui answer whose
 * prefill took over a minute on a loaded CPU lost its connection ("RequestError: connection closed").
 */

const IDLE_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let nats: NatsServerHandle;

beforeAll(async () => {
  // workerd has a WebSocket global; Node 20 does not.
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  nats = await startNatsServer();
}, 60_000);
afterAll(async () => {
  await nats.dispose();
});

describe("createNatsConnector", () => {
  it("closes an idle connection, keeps a held one past the idle time, and closes it once released", async () => {
    const connector = createNatsConnector({ url: nats.wsUrl, name: "idle-test", idleMs: IDLE_MS });
    const idle = await connector.get();
    await sleep(IDLE_MS * 3);
    expect(idle.isClosed()).toBe(true);

    const release = connector.hold();
    const held = await connector.get();
    await sleep(IDLE_MS * 3);
    expect(held.isClosed()).toBe(false);
    // A get() during the hold (placement, another hop) does not restart the idle clock under it.
    await connector.get();
    await sleep(IDLE_MS * 3);
    expect(held.isClosed()).toBe(false);
    release();
    release();
    await sleep(IDLE_MS * 3);
    expect(held.isClosed()).toBe(true);
    await connector.close();
  }, 30_000);
});
