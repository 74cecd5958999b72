import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeProcess } from "../../infra/local/spawn-edge.ts";
import { spawnGpuNodeProcess, type GpuNodeProcess } from "../harness/spawn-gpu-node-process.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { spawnEdgeOnFreePorts } from "../harness/spawn-edge-on-free-ports.ts";

const KEY = "sk-fleet-test";
let nats: NatsServerHandle;
let edge: EdgeProcess;
let persistDir: string;
const nodes = new Map<string, GpuNodeProcess>();

type Placement = { reason: string; attempts: Array<{ nodeId?: string; code: string }> };
type Mol = {
  nodes: { answer?: string };
  placement: { answer?: Placement };
  usage: { answer?: { promptTokens: number; cachedPromptTokens: number } };
};

beforeAll(async () => {
  nats = await startNatsServer();
  for (const id of ["n1", "n2", "n3"]) nodes.set(id, spawnGpuNodeProcess(id, nats.url));
  await Promise.all([...nodes.values()].map((n) => n.ready));
  persistDir = await mkdtemp(join(tmpdir(), "molmesh-fleet-"));
  edge = await spawnEdgeOnFreePorts({
    natsWsUrl: nats.wsUrl,
    devApiKey: KEY,
    persistDir,
    vars: {
      MOL_HOP_FIRST_PART_TIMEOUT_MS: "1500",
      MOL_HOP_STALL_TIMEOUT_MS: "2000",
      MOL_HOP_REPLY_TIMEOUT_MS: "3000",
      MOL_FLEET_STALE_MS: "3000",
    },
  });
}, 180_000);

afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await edge?.stop();
  await Promise.all([...nodes.values()].map((n) => n.stop({ force: true })));
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  await rm(persistDir, { recursive: true, force: true });
});

const post = async (path: string, body: unknown) =>
  fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function conversation(): Promise<string> {
  return ((await (await post("/v1/conversations", {})).json()) as { id: string }).id;
}

async function turn(id: string, input: string, extra: object = {}): Promise<Mol> {
  const response = await post("/v1/responses", {
    conversation: id,
    input,
    model: "mol:chat",
    max_output_tokens: 8,
    ...extra,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { mol: Mol }).mol;
}

async function items(id: string): Promise<Array<{ role: string }>> {
  const response = await fetch(`${edge.url}/v1/conversations/${id}/items?order=asc&limit=100`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  return ((await response.json()) as { data: Array<{ role: string }> }).data;
}

type Takeover = { fromNode: string; toNode: string; atChar: number; code: string };
interface Streamed {
  events: string[];
  deltas: string;
  text: string | undefined;
  mol: (Mol & { takeovers?: Takeover[] }) | undefined;
}

/** Streams a long answer, SIGKILLs `victim` once text is flowing, and reads the stream to its end. */
async function streamKillingMidway(id: string, input: string, victim: GpuNodeProcess): Promise<Streamed> {
  const response = await post("/v1/responses", {
    conversation: id,
    input,
    model: "mol:chat",
    stream: true,
    max_output_tokens: 1500,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let sse = "";
  while (!sse.includes("response.output_text.delta")) {
    const { done, value } = await reader.read();
    if (done) break;
    sse += decoder.decode(value, { stream: true });
  }
  await victim.stop({ force: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    sse += decoder.decode(value, { stream: true });
  }
  const events: string[] = [];
  let deltas = "";
  let final: { output?: Array<{ content?: Array<{ text?: string }> }>; mol?: Streamed["mol"] } | undefined;
  for (const block of sse.split("\n\n")) {
    const event = /^event: (.+)$/m.exec(block)?.[1];
    const data = /^data: (.+)$/m.exec(block)?.[1];
    if (!event || !data) continue;
    events.push(event);
    const parsed = JSON.parse(data) as { delta?: string; response?: typeof final };
    if (event === "response.output_text.delta") deltas += parsed.delta ?? "";
    if (event === "response.completed" || event === "response.incomplete") final = parsed.response;
  }
  return { events, deltas, text: final?.output?.[0]?.content?.[0]?.text, mol: final?.mol };
}

/** One response, one assistant item, one terminal event that is not a failure, and no text shown twice. */
function expectOneContinuousAnswer(streamed: Streamed): void {
  const count = (name: string) => streamed.events.filter((e) => e === name).length;
  expect(count("response.failed"), streamed.events.join(",")).toBe(0);
  expect(count("response.created")).toBe(1);
  expect(count("response.output_item.added")).toBe(1);
  expect(count("response.completed") + count("response.incomplete")).toBe(1);
  expect(streamed.text).toBe(streamed.deltas);
  expect(streamed.deltas.length).toBeGreaterThan(0);
}

describe("a fleet of GPU node processes", () => {
  it("keeps a conversation on the node where its KV is warm (cached tokens show it)", async () => {
    const id = await conversation();
    const first = await turn(id, "first question");
    for (let i = 0; i < 3; i++) {
      const next = await turn(id, `follow-up ${i}`);
      expect(next.nodes.answer).toBe(first.nodes.answer);
      expect(next.placement.answer?.reason).toBe("warm");
      expect(next.usage.answer?.cachedPromptTokens).toBeGreaterThan(
        (next.usage.answer?.promptTokens ?? 0) / 2,
      );
    }
  });

  it("fails over when the warm node is killed before the first token: one answer, same turn", async () => {
    const id = await conversation();
    const first = await turn(id, "hello");
    const victim = nodes.get(first.nodes.answer as string) as GpuNodeProcess;
    await victim.stop({ force: true });
    const next = await turn(id, "are you there?");
    expect(next.nodes.answer).not.toBe(victim.nodeId);
    // Either the hop tried the dead node and failed over at once, or the fleet view had already dropped it.
    for (const attempt of next.placement.answer?.attempts ?? []) {
      expect(attempt).toMatchObject({ nodeId: victim.nodeId, code: "no_responders" });
    }
    expect((await items(id)).map((i) => i.role)).toEqual(["user", "assistant", "user", "assistant"]);
    nodes.delete(victim.nodeId);
  });

  it("continues the answer on another node when its node dies mid-stream: one answer, the takeover recorded", async () => {
    const id = await conversation();
    const first = await turn(id, "warm up");
    const victim = nodes.get(first.nodes.answer as string) as GpuNodeProcess;
    const streamed = await streamKillingMidway(id, "a very long story", victim);
    nodes.delete(victim.nodeId);
    expectOneContinuousAnswer(streamed);
    expect(streamed.mol?.takeovers?.[0]).toMatchObject({ fromNode: victim.nodeId });
    expect(streamed.mol?.nodes.answer).not.toBe(victim.nodeId);
    await turn(id, "again");
    expect((await items(id)).map((i) => i.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("routes around a node that hangs", async () => {
    nodes.set("n4", spawnGpuNodeProcess("n4", nats.url));
    await (nodes.get("n4") as GpuNodeProcess).ready;
    const id = await conversation();
    const first = await turn(id, "before the hang");
    const victim = nodes.get(first.nodes.answer as string) as GpuNodeProcess;
    victim.child.kill("SIGSTOP");
    try {
      const next = await turn(id, "after the hang");
      expect(next.nodes.answer).not.toBe(victim.nodeId);
      for (const attempt of next.placement.answer?.attempts ?? []) {
        expect(attempt).toMatchObject({ nodeId: victim.nodeId, code: "deadline_exceeded" });
      }
    } finally {
      victim.child.kill("SIGCONT");
    }
  }, 60_000);

  it("gives new conversations to a node that joins late", async () => {
    nodes.set("late", spawnGpuNodeProcess("late", nats.url));
    await (nodes.get("late") as GpuNodeProcess).ready;
    await new Promise((r) => setTimeout(r, 1_000)); // a heartbeat or two
    const served = new Set<string>();
    for (let i = 0; i < 8; i++)
      served.add((await turn(await conversation(), `new ${i}`)).nodes.answer as string);
    expect(served.has("late")).toBe(true);
  }, 60_000);

  it("SIGKILL of the answering node mid-stream, ten times in a row on a 4-node mesh: 10/10 continuous answers", async () => {
    let spawned = 0;
    const topUp = async () => {
      const joining: GpuNodeProcess[] = [];
      while (nodes.size < 4) {
        const node = spawnGpuNodeProcess(`k${++spawned}`, nats.url);
        nodes.set(node.nodeId, node);
        joining.push(node);
      }
      await Promise.all(joining.map((n) => n.ready));
    };
    await topUp();
    await new Promise((r) => setTimeout(r, 1_000)); // every node's heartbeat is in the fleet view
    const id = await conversation();
    let answering = (await turn(id, "warm up")).nodes.answer as string;
    const completed: string[] = [];
    let turns = 1;
    // A kill that lands after the answer's last part (the tiny model may stop early) tests nothing: such a turn
    // must have been answered whole by the victim, and does not count. Every other kill must be taken over.
    for (let attempt = 0; completed.length < 10 && attempt < 20; attempt++) {
      const victim = nodes.get(answering) as GpuNodeProcess;
      const streamed = await streamKillingMidway(id, `a very long story, part ${attempt}`, victim);
      turns += 1;
      nodes.delete(victim.nodeId);
      expectOneContinuousAnswer(streamed);
      const takeover = streamed.mol?.takeovers?.[0];
      if (takeover) {
        expect(takeover).toMatchObject({ fromNode: victim.nodeId });
        expect(takeover.atChar).toBeGreaterThan(0);
        completed.push(`${victim.nodeId}→${takeover.toNode}@${takeover.atChar}`);
      } else {
        expect(streamed.mol?.nodes.answer, JSON.stringify(streamed.mol?.placement)).toBe(victim.nodeId);
      }
      await topUp();
      answering = streamed.mol?.nodes.answer as string;
      if (!nodes.has(answering)) {
        // The victim had the KV: a plain turn shows where the conversation went.
        answering = (await turn(id, "where now?")).nodes.answer as string;
        turns += 1;
      }
    }
    expect(completed).toHaveLength(10);
    const roles = (await items(id)).map((i) => i.role);
    expect(roles).toEqual(Array.from({ length: turns }, () => ["user", "assistant"]).flat());
  }, 420_000);

  it("survives a nats-server restart: new turns work once it is back", async () => {
    const id = await conversation();
    await turn(id, "before the restart");
    await nats.stop();
    await new Promise((r) => setTimeout(r, 500));
    await nats.start();
    let status = 0;
    const deadline = Date.now() + 30_000;
    while (status !== 200 && Date.now() < deadline) {
      const response = await post("/v1/responses", {
        conversation: id,
        input: "after the restart",
        model: "mol:chat",
        max_output_tokens: 8,
      });
      status = response.status;
      await response.body?.cancel();
      if (status !== 200) await new Promise((r) => setTimeout(r, 500));
    }
    expect(status).toBe(200);
  }, 60_000);
});
