/**
 * Least privilege of the production NATS accounts (infra/nats/cluster/accounts.conf), proved on a real
 * nats-server with the real clients: the GPU node service with its own credentials, and the edge's hop functions
 * over the WebSocket listener (wsconnect) with the edge's. Each denial is asserted twice: the server reports the
 * violation to the offender, and a privileged observer (admin, subscribed to the mesh's subjects) sees nothing
 * arrive. Each denial sits next to an allowed control, so a test cannot pass because nothing works at all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestError, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { Kvm, type KV } from "@nats-io/kv";
import {
  DEFAULT_ADAPTER_IDS,
  MAX_COMPLETION_TOKENS,
  NODE_QUEUE_GROUP,
  NODE_STATUS_BUCKET,
  buildCancelSubject,
  buildGenerateSubject,
  buildNodeGenerateSubject,
  buildNodeStatusKey,
  decodeWireMessage,
  nodeStatusSchema,
} from "../../schema/wire/v2/index.ts";
import type { NodeLogger } from "../../gpu-nodes/src/service/serve-generate.ts";
import { startGpuNode, type GpuNode } from "../../gpu-nodes/src/service/start-gpu-node.ts";
import {
  HOLD_UNTIL_CANCELLED,
  createStreamingEngine,
  type StreamingEngine,
} from "./create-streaming-engine.ts";
import { startSecuredNatsServer, type SecuredNatsServer } from "./start-secured-nats-server.ts";
import { startWsEdge, type WsEdge } from "./start-ws-edge.ts";
import { FORGED_PAYLOAD } from "./ws-edge-protocol.ts";
import { findPermissionViolation } from "./find-permission-violation.ts";
import { trySubscribe } from "./try-subscribe.ts";
import { watchPermissionErrors, type PermissionErrorWatch } from "./watch-permission-errors.ts";

const NODE_A = "gpu-node-a";
const NODE_B = "gpu-node-b";
const NODE_A_KEY = buildNodeStatusKey(NODE_A);
const KV_SUBJECT = (key: string) => `$KV.${NODE_STATUS_BUCKET}.${key}`;

let nats: SecuredNatsServer;
let admin: NatsConnection;
let adminKv: KV;
let observed: Array<{ subject: string; data: string }>;
let nodeANc: NatsConnection;
let nodeAViolations: PermissionErrorWatch;
let nodeAWarnings: string[];
let engine: StreamingEngine;
let gpuNode: GpuNode;
let nodeB: NatsConnection;
let nodeBViolations: PermissionErrorWatch;
let edge: WsEdge;

/** Everything the observer received on `subject` (after a flush, so anything delivered so far is in). */
async function observedOn(subject: string): Promise<string[]> {
  await admin.flush();
  return observed.filter((m) => m.subject === subject).map((m) => m.data);
}

async function nodeIdInBucket(key: string): Promise<string | undefined> {
  const entry = await adminKv.get(key);
  if (entry?.operation !== "PUT") return undefined;
  return decodeWireMessage(nodeStatusSchema, entry.value, "reply", { anyVersion: true }).nodeId;
}

beforeAll(async () => {
  nats = await startSecuredNatsServer([NODE_A, NODE_B]);
  admin = await nats.connectAs("admin");
  // As in production, admin creates the bucket: the nodes' credentials may not (infra/nats/README.md, "The heartbeat bucket").
  adminKv = await new Kvm(admin).create(NODE_STATUS_BUCKET, { history: 1, ttl: 10_000 });
  observed = [];
  const record = (_error: Error | null, msg: Msg) =>
    void observed.push({ subject: msg.subject, data: msg.string() });
  // The observer listens where offenders aim, but not on every node subject: a hop to an unknown node must
  // still find no responder.
  for (const subject of [
    "molmesh.v1.hop.*",
    buildCancelSubject(),
    `molmesh.v1.node.${NODE_A}.>`,
    `molmesh.v1.node.${NODE_B}.>`,
    `$KV.${NODE_STATUS_BUCKET}.>`,
  ]) {
    admin.subscribe(subject, { callback: record });
  }
  await admin.flush();

  nodeANc = await nats.connectAs(NODE_A);
  nodeAViolations = watchPermissionErrors(nodeANc);
  nodeAWarnings = [];
  const logger: NodeLogger = {
    info: () => undefined,
    warn: (_fields, message) => void nodeAWarnings.push(message),
    error: (_fields, message) => void nodeAWarnings.push(message),
  };
  engine = createStreamingEngine(DEFAULT_ADAPTER_IDS);
  gpuNode = await startGpuNode({
    nc: nodeANc,
    engine,
    nodeId: NODE_A,
    logger,
    now: () => performance.now(),
    clock: () => Date.now(),
    heartbeatIntervalMs: 1_000,
  });
  nodeB = await nats.connectAs(NODE_B);
  nodeBViolations = watchPermissionErrors(nodeB);
  edge = await startWsEdge({ wsUrl: nats.server.wsUrl, creds: nats.credsOf("edge") });
});

afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await edge?.stop();
  await gpuNode?.stop(500);
  await Promise.allSettled([nodeANc?.close(), nodeB?.close(), admin?.close()]);
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

describe("allowed: the edge (wss, edge creds) and a real GPU node (tcp, its own creds)", () => {
  it("the node writes its own heartbeat into the bucket admin created", async () => {
    expect(await nodeIdInBucket(NODE_A_KEY)).toBe(NODE_A);
    expect(nodeAWarnings).toEqual([]);
  });

  it("the edge routes over the queue group and summarizes on the node's own subject", async () => {
    expect(await edge.call({ op: "route" })).toEqual({ ok: true, value: { label: "chat", nodeId: NODE_A } });
    expect(await edge.call({ op: "summary", nodeId: NODE_A })).toEqual({
      ok: true,
      value: { nodeId: NODE_A },
    });
  });

  it("the longest answer the wire allows streams back in full (allow_responses past the default of one)", async () => {
    const answer = await edge.call({ op: "answer", nodeId: NODE_A, maxTokens: MAX_COMPLETION_TOKENS });
    expect(answer).toEqual({
      ok: true,
      value: {
        nodeId: NODE_A,
        parts: { start: 1, "text-delta": MAX_COMPLETION_TOKENS, finish: 1 },
        finishText: "x".repeat(MAX_COMPLETION_TOKENS),
      },
    });
    // and over the queue group
    expect(await edge.call({ op: "answer", maxTokens: 3 })).toMatchObject({
      ok: true,
      value: { parts: { start: 1, "text-delta": 3, finish: 1 } },
    });
  });

  it("the edge's abort reaches the node as a cancel", async () => {
    const before = engine.cancelled;
    expect(
      await edge.call({ op: "abort-answer", view: `user: ${HOLD_UNTIL_CANCELLED}\nassistant:` }),
    ).toEqual({
      ok: true,
      value: { error: "CancelledError" },
    });
    await expect.poll(() => engine.cancelled, { timeout: 2_000 }).toBe(before + 1);
  });

  it(
    "the edge reads the bucket like FleetObject (keys, get) and watches it like the placement",
    { retry: 2 },
    async () => {
      expect(await edge.call({ op: "read-fleet" })).toEqual({
        ok: true,
        value: { keys: [NODE_A_KEY], nodeIds: [NODE_A] },
      });
      expect(await edge.call({ op: "watch-fleet" })).toEqual({ ok: true, value: { keys: [NODE_A_KEY] } });
    },
  );

  it("none of the above drew a permission violation", async () => {
    expect(await edge.call({ op: "violations" })).toEqual({ ok: true, value: [] });
    expect(nodeAViolations.seen).toEqual([]);
  });
});

describe("a GPU node's credentials cannot send hops", () => {
  it.each([buildGenerateSubject(), buildNodeGenerateSubject(NODE_A), buildNodeGenerateSubject(NODE_B)])(
    "a request on %s is refused and never reaches a node",
    async (subject) => {
      const refused = nodeB.request(subject, FORGED_PAYLOAD, { timeout: 2_000 });
      await expect(refused).rejects.toSatisfy(isViolationOn(subject));
      expect(await observedOn(subject)).not.toContain(FORGED_PAYLOAD);
    },
  );

  it("nor cancel another node's hops", async () => {
    const subject = buildCancelSubject();
    nodeB.publish(subject, FORGED_PAYLOAD);
    await expect(nodeBViolations.waitFor("publish", subject)).resolves.toEqual({
      operation: "publish",
      subject,
    });
    expect(await observedOn(subject)).not.toContain(FORGED_PAYLOAD);
  });
});

describe("a GPU node cannot pose as another node", () => {
  it("it writes its own heartbeat key (control)", async () => {
    const kv = await new Kvm(nodeB).open(NODE_STATUS_BUCKET);
    await kv.put(buildNodeStatusKey(NODE_B), FORGED_PAYLOAD);
    expect((await adminKv.get(buildNodeStatusKey(NODE_B)))?.string()).toBe(FORGED_PAYLOAD);
    await kv.delete(buildNodeStatusKey(NODE_B));
  });

  it("but cannot write or delete another node's key", async () => {
    const kv = await new Kvm(nodeB).open(NODE_STATUS_BUCKET);
    const subject = KV_SUBJECT(NODE_A_KEY);
    await expect(kv.put(NODE_A_KEY, FORGED_PAYLOAD, { timeout: 2_000 })).rejects.toSatisfy(
      isViolationOn(subject),
    );
    await expect(kv.delete(NODE_A_KEY)).rejects.toSatisfy(isViolationOn(subject));
    expect(await observedOn(subject)).not.toContain(FORGED_PAYLOAD);
    expect(await nodeIdInBucket(NODE_A_KEY)).toBe(NODE_A);
  });

  it("nor take another node's hops, nor hops outside the queue group", async () => {
    // controls: its own subject, and the cold path as a queue group member
    for (const [subject, queue] of [
      [buildNodeGenerateSubject(NODE_B), undefined],
      [buildGenerateSubject(), NODE_QUEUE_GROUP],
    ] as const) {
      const { violation, subscription } = await trySubscribe(nodeB, subject, queue);
      subscription?.unsubscribe();
      expect(violation).toBeUndefined();
    }
    for (const subject of [buildNodeGenerateSubject(NODE_A), buildGenerateSubject()]) {
      const { violation, subscription } = await trySubscribe(nodeB, subject);
      subscription?.unsubscribe();
      expect(violation).toMatchObject({ operation: "subscription", subject });
    }
  });
});

describe("the edge's credentials cannot pose as a GPU node", () => {
  it.each([
    { subject: buildGenerateSubject(), queue: NODE_QUEUE_GROUP },
    { subject: buildGenerateSubject() },
    { subject: buildNodeGenerateSubject(NODE_A) },
    { subject: "molmesh.v2.node.*.generate" },
  ])("it cannot subscribe to $subject as a responder (queue $queue)", async ({ subject, queue }) => {
    expect(await edge.call({ op: "subscribe", subject, ...(queue ? { queue } : {}) })).toEqual({
      ok: true,
      value: { violation: { operation: "subscription", subject, ...(queue ? { queue } : {}) } },
    });
  });

  it("so a hop to a node id it claims finds no responder", async () => {
    const subject = buildNodeGenerateSubject("gpu-node-ghost");
    expect(await edge.call({ op: "subscribe", subject })).toMatchObject({
      value: { violation: { subject } },
    });
    await expect(admin.request(subject, FORGED_PAYLOAD, { timeout: 2_000 })).rejects.toSatisfy(
      (error) => error instanceof RequestError && error.isNoResponders(),
    );
  });

  it.each([NODE_A_KEY, "node.gpu-node-edge"])("it cannot put the heartbeat key %s", async (key) => {
    const subject = KV_SUBJECT(key);
    expect(await edge.call({ op: "kv-put", key })).toMatchObject({
      ok: false,
      error: { violation: { operation: "publish", subject } },
    });
    expect(await observedOn(subject)).not.toContain(FORGED_PAYLOAD);
  });

  it.each([
    KV_SUBJECT(NODE_A_KEY),
    KV_SUBJECT("node.gpu-node-edge"),
    KV_SUBJECT("anything"),
    `$JS.API.STREAM.PURGE.KV_${NODE_STATUS_BUCKET}`,
    `$JS.API.STREAM.DELETE.KV_${NODE_STATUS_BUCKET}`,
  ])("it cannot publish on %s", async (subject) => {
    expect(await edge.call({ op: "publish", subject })).toEqual({
      ok: true,
      value: { violation: { operation: "publish", subject } },
    });
    expect(await observedOn(subject)).not.toContain(FORGED_PAYLOAD);
  });

  it("the bucket holds only the real node's heartbeat afterwards", async () => {
    const keys: string[] = [];
    for await (const key of await adminKv.keys()) keys.push(key);
    expect(keys).toEqual([NODE_A_KEY]);
    expect(await nodeIdInBucket(NODE_A_KEY)).toBe(NODE_A);
  });
});

describe("each role only on its own transport", () => {
  it("the edge's credentials are refused over TCP", async () => {
    await expect(nats.connectAs("edge")).rejects.toMatchObject({ name: "AuthorizationError" });
  });

  it("a node's credentials are refused over WebSocket", async () => {
    expect(await edge.call({ op: "try-connect", creds: nats.credsOf(NODE_B) })).toEqual({
      ok: true,
      value: { refused: "AuthorizationError" },
    });
    // control: the same call with the edge's own credentials connects
    expect(await edge.call({ op: "try-connect", creds: nats.credsOf("edge") })).toEqual({
      ok: true,
      value: {},
    });
  });
});

describe("shutdown", () => {
  it("the node deletes its own heartbeat on stop, and drew no violation all along", async () => {
    await gpuNode.stop(500);
    expect(await nodeIdInBucket(NODE_A_KEY)).toBeUndefined();
    expect(nodeAViolations.seen).toEqual([]);
    expect(nodeAWarnings).toEqual([]);
  });
});

function isViolationOn(subject: string) {
  return (error: unknown): boolean => {
    const violation = findPermissionViolation(error);
    return violation?.operation === "publish" && violation.subject === subject;
  };
}
