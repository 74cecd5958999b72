import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_STATUS_BUCKET } from "../../schema/wire/v2/index.ts";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * Placement per colo, in workerd over real NATS and a real node: however many conversations are live, the edge
 * watches the heartbeat bucket once (the colo's fleet object), and every conversation's hops are still placed on
 * a node (not left to the queue group). A KV watch is a JetStream consumer on the bucket's stream, so the server's
 * consumer count is the number of watches.
 */
const CONVERSATIONS = 12;

let mesh: TestMesh;
let nc: NatsConnection;

beforeAll(async () => {
  mesh = await startTestMesh();
  nc = await connect({ servers: mesh.nats.url });
}, 180_000);

afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await nc?.close();
  await mesh?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

async function heartbeatWatches(): Promise<number> {
  const jsm = await jetstreamManager(nc);
  let count = 0;
  for await (const _consumer of jsm.consumers.list(`KV_${NODE_STATUS_BUCKET}`)) count++;
  return count;
}

type Mol = { placement: { answer?: { reason: string } } };

async function turnIn(conversation: string): Promise<Mol> {
  const response = await mesh.api("/v1/responses", {
    method: "POST",
    json: { conversation, input: "hello there", model: "mol:chat", max_output_tokens: 2 },
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { mol: Mol }).mol;
}

describe("placement per colo", () => {
  it(`watches the heartbeats once for ${CONVERSATIONS} live conversations, and places every one's hops`, async () => {
    const before = await heartbeatWatches();
    const ids: string[] = [];
    for (let i = 0; i < CONVERSATIONS; i++) {
      const created = await mesh.api("/v1/conversations", { method: "POST", json: {} });
      ids.push(((await created.json()) as { id: string }).id);
    }
    const facts: Mol[] = [];
    // Four at a time: every conversation object is live (its NATS connection open) when the count is taken.
    for (let i = 0; i < ids.length; i += 4) {
      facts.push(...(await Promise.all(ids.slice(i, i + 4).map((id) => turnIn(id)))));
    }
    expect((await mesh.api("/healthz")).status).toBe(200);
    expect(await heartbeatWatches()).toBe(before + 1);
    // Placed by the fleet object: on a node it chose, never the queue group's any-node.
    expect(facts.map((f) => f.placement.answer?.reason)).not.toContain("queue-group");
    expect(facts.every((f) => f.placement.answer !== undefined)).toBe(true);
    // A second turn of each stays where its KV is.
    const again = await Promise.all(ids.slice(0, 4).map((id) => turnIn(id)));
    expect(again.map((f) => f.placement.answer?.reason)).toEqual(["warm", "warm", "warm", "warm"]);
    expect(await heartbeatWatches()).toBe(before + 1);
  });
});
