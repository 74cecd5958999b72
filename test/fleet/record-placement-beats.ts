/**
 * Records the fixture of `placement-decisions.test.ts`: real heartbeats of a small fleet under real turns, and the
 * placement decisions the edge makes on them. Run it again only to record a new fixture on purpose (a change of
 * the heartbeat's shape), never to make the test pass:
 *
 *   npx tsx test/fleet/record-placement-beats.ts
 *
 * Three GPU node processes on the generated tiny model, NATS and the edge in workerd; sixteen conversations of three
 * routed turns, four at a time, while a watch on the heartbeat bucket keeps every beat. Fleet snapshots (each node's
 * latest beat at one instant) are then asked placement questions: each adapter, for conversations the beats show warm
 * and for new ones, with failed nodes excluded, required features, prompt and held sizes, and hops placed since the
 * beat. Questions come from a seeded generator, so a second run differs only by what the fleet did.
 */
import { writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { adapterEnvName } from "../../gpu-nodes/src/config/node-config.ts";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import type { GpuNodeProcess } from "../../infra/local/spawn-gpu-node.ts";
import { spawnBenchNode } from "../bench/spawn-bench-node.ts";
import {
  NODE_STATUS_BUCKET,
  decodeWireMessage,
  nodeStatusSchema,
  type NodeStatus,
} from "../../schema/wire/v2/index.ts";
import { chooseNode, type PlacementQuestion } from "../../workers/src/fleet/choose-node.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { spawnEdgeOnFreePorts } from "../harness/spawn-edge-on-free-ports.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { PLACEMENT_FIXTURE, type PlacementFixture, type RecordedQuestion } from "./placement-fixture.ts";

const KEY = "sk-record-placement";
const CONVERSATIONS = 16;
const TURNS = 3;
const CONCURRENCY = 4;
const SNAPSHOTS = 30;
const QUESTIONS_PER_SNAPSHOT = 24;

const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
const nats = await startNatsServer();
const nodes: GpuNodeProcess[] = ["n1", "n2", "n3"].map((nodeId) =>
  // Few slots and a low concurrency, so the fleet saturates and spills; beats four times a second.
  spawnBenchNode(nodeId, nats.url, {
    MOL_BASE_MODEL: models.base,
    ...Object.fromEntries(Object.entries(models.adapters).map(([id, path]) => [adapterEnvName(id), path])),
    MOL_SLOTS_PER_ADAPTER: "3",
    MOL_MAX_CONCURRENT: "4",
    MOL_HEARTBEAT_INTERVAL_MS: "250",
  }),
);
await Promise.all(nodes.map((n) => n.ready));
const persistDir = await mkdtemp(join(tmpdir(), "molmesh-record-"));
const edge = await spawnEdgeOnFreePorts({ natsWsUrl: nats.wsUrl, devApiKey: KEY, persistDir });

// Every beat, as the bucket delivered it, with the time it arrived.
const nc = await connect({ servers: nats.url });
const kv = await new Kvm(nc).open(NODE_STATUS_BUCKET);
const beats: Array<{ at: number; revision: number; status: NodeStatus }> = [];
const watcher = await kv.watch({ key: "node.*" });
void (async () => {
  for await (const entry of watcher) {
    if (entry.operation !== "PUT") continue;
    const status = decodeWireMessage(nodeStatusSchema, entry.value, "reply", { anyVersion: true });
    beats.push({ at: Date.now(), revision: entry.revision, status });
  }
})();

const post = (path: string, body: unknown) =>
  fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const INPUTS = [
  "What is the capital of France?",
  "Write a python function that reverses a list.",
  "Plan a trip to Lyon with three stops.",
  "Show me a card with tomorrow's weather.",
];
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < CONVERSATIONS) {
      const i = next++;
      const { id } = (await (await post("/v1/conversations", {})).json()) as { id: string };
      for (let t = 0; t < TURNS; t++) {
        const response = await post("/v1/responses", {
          conversation: id,
          input: INPUTS[(i + t) % INPUTS.length],
          max_output_tokens: 12,
        });
        await response.text();
      }
    }
  }),
);
await new Promise((r) => setTimeout(r, 1_000));
watcher.stop();
await nc.close();
await edge.stop();
await Promise.all(nodes.map((n) => n.stop({ force: true })));
await nats.dispose();
await rm(persistDir, { recursive: true, force: true });

// Snapshots: each node's latest beat at evenly spaced beat arrivals, busy ones and idle ones alike.
const snapshots: Array<{ beats: number[] }> = [];
const kept = new Map<string, number>(); // `${nodeId}@${revision}` → index in `recorded`
const recorded: NodeStatus[] = [];
for (let s = 1; s <= SNAPSHOTS; s++) {
  const upTo = Math.floor((s * beats.length) / SNAPSHOTS);
  const latest = new Map<string, { revision: number; status: NodeStatus }>();
  for (const beat of beats.slice(0, upTo)) latest.set(beat.status.nodeId, beat);
  if (latest.size === 0) continue;
  const indices = [...latest.values()].map(({ revision, status }) => {
    const key = `${status.nodeId}@${revision}`;
    let index = kept.get(key);
    if (index === undefined) {
      index = recorded.push(status) - 1;
      kept.set(key, index);
    }
    return index;
  });
  snapshots.push({ beats: indices });
}

// Seeded questions (mulberry32), so the fixture depends only on the beats.
let seed = 20261207;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const questions: RecordedQuestion[] = [];
snapshots.forEach((snapshot, snapshotIndex) => {
  const fleet = snapshot.beats.map((i) => recorded[i] as NodeStatus);
  const adapters = [...new Set(fleet.flatMap((n) => n.adapters.map((a) => a.id)))];
  const warm = [...new Set(fleet.flatMap((n) => n.adapters.flatMap((a) => a.warmConversations)))];
  const served = fleet.flatMap((n) => n.adapters.map((a) => a.name ?? a.id));
  for (let q = 0; q < QUESTIONS_PER_SNAPSHOT; q++) {
    const conversationId = warm.length > 0 && random() < 0.6 ? pick(warm) : `conv_new_${snapshotIndex}_${q}`;
    const adapter = random() < 0.15 && served.length > 0 ? pick(served) : pick(adapters);
    const question: Omit<PlacementQuestion, "nodes"> = {
      adapter,
      conversationId,
      ...(random() < 0.2 ? { lastNodeId: pick(fleet).nodeId } : {}),
      ...(random() < 0.2 ? { exclude: new Set([pick(fleet).nodeId]) } : {}),
      ...(random() < 0.15
        ? { requires: [pick(["output:json_schema", "output:tools", "return:tokens"])] }
        : {}),
      ...(random() < 0.7 ? { promptTokens: Math.floor(20 + random() * 3_000) } : {}),
      ...(random() < 0.5 ? { warmTokens: Math.floor(random() * 2_000) } : {}),
      ...(random() < 0.4
        ? {
            recentHops: new Map(
              fleet.filter(() => random() < 0.5).map((n) => [n.nodeId, 1 + Math.floor(random() * 4)]),
            ),
          }
        : {}),
    };
    const choice = chooseNode({ ...question, nodes: fleet });
    const { exclude, recentHops, ...plain } = question;
    questions.push({
      snapshot: snapshotIndex,
      question: {
        ...plain,
        ...(exclude ? { exclude: [...exclude] } : {}),
        ...(recentHops ? { recentHops: Object.fromEntries(recentHops) } : {}),
      },
      decision: choice,
    });
  }
});

const fixture: PlacementFixture = {
  recordedWith: "npx tsx test/fleet/record-placement-beats.ts",
  recordedAt: new Date().toISOString(),
  beats: recorded,
  snapshots,
  questions,
};
await writeFile(join(REPO_ROOT, PLACEMENT_FIXTURE), `${JSON.stringify(fixture)}\n`);
const reasons = new Map<string, number>();
for (const q of questions) reasons.set(q.decision.reason, (reasons.get(q.decision.reason) ?? 0) + 1);
console.log(
  `recorded ${beats.length} beats; kept ${recorded.length} in ${snapshots.length} snapshots; ${questions.length} decisions:`,
  Object.fromEntries(reasons),
);
process.exit(0);
