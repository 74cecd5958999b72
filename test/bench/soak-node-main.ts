/**
 * A GPU node process for `npm run bench:soak` whose engine streams a scripted answer at a fixed pace instead of
 * running a model: the soak tests the mesh's fault handling (SIGKILL, NATS restart, failover), and 10,000 turns
 * of a real model would take hours on a 2-core box. Everything else is the real node: NATS, heartbeats,
 * admission, the wire. The answer streams for a while (MOL_SOAK_WORDS words, MOL_SOAK_WORD_MS apart), so a
 * SIGKILL lands mid-stream and the edge has a continuation to take over.
 */
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import { startGpuNode } from "../../gpu-nodes/src/service/start-gpu-node.ts";
import type { Engine, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v1/index.ts";

const REVISION = "sha256:0000000000000000";

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Route: the first choice at once. Summary: one short line. Answer: `words` words, `wordMs` apart. */
export function createScriptedEngine(o: { words: number; wordMs: number }): Engine {
  const warm = new Map<string, string[]>();
  const touch = (request: EngineGenerateRequest) => {
    const list = warm.get(request.adapter) ?? [];
    warm.set(
      request.adapter,
      [request.conversationId, ...list.filter((c) => c !== request.conversationId)].slice(0, 16),
    );
  };
  return {
    kind: "scripted",
    baseModel: { name: "scripted", revision: REVISION },
    adapters: DEFAULT_ADAPTER_IDS.map((id) => ({ id, revision: REVISION, lora: false })),
    async generate(request) {
      const started = performance.now();
      let text = "";
      const emit = (delta: string) => {
        text += delta;
        request.onTextDelta?.(delta);
      };
      if (request.constraint?.type === "choice") emit(request.constraint.choices[0] ?? "");
      else if (request.lane === "summary") emit("The user asked; the assistant answered.");
      else {
        const words = Math.min(o.words, request.maxTokens);
        for (let i = 0; i < words; i++) {
          if (i > 0) await sleep(o.wordMs, request.signal);
          emit(`w${i} `);
        }
      }
      touch(request);
      const promptTokens = Math.ceil(request.prompt.length / 4);
      return {
        text,
        finishReason: "stop",
        usage: {
          promptTokens,
          cachedPromptTokens: 0,
          evaluatedPromptTokens: promptTokens,
          completionTokens: 1,
        },
        queueMs: 0,
        prefillMs: 0,
        decodeMs: performance.now() - started,
      };
    },
    snapshot: () =>
      DEFAULT_ADAPTER_IDS.map((adapter) => ({
        adapter,
        totalSlots: 64,
        freeSlots: 64,
        warmConversations: warm.get(adapter) ?? [],
        waiting: 0,
      })),
    close: () => Promise.resolve(),
  };
}

const env = process.env;
const nodeId = env.MOL_NODE_ID ?? `soak-${process.pid}`;
const nc = await connect({
  servers: (env.MOL_NATS_URL ?? "nats://127.0.0.1:4222").split(","),
  name: `molmesh-soak-node-${nodeId}`,
  maxReconnectAttempts: -1,
  reconnectTimeWait: 250,
});
await startGpuNode({
  nc,
  engine: createScriptedEngine({
    words: Number(env.MOL_SOAK_WORDS ?? 32),
    wordMs: Number(env.MOL_SOAK_WORD_MS ?? 25),
  }),
  nodeId,
  maxConcurrent: Number(env.MOL_MAX_CONCURRENT ?? 64),
  heartbeatIntervalMs: Number(env.MOL_HEARTBEAT_INTERVAL_MS ?? 500),
  heartbeatTtlMs: Number(env.MOL_HEARTBEAT_TTL_MS ?? 3000),
  logger: pino({ level: env.MOL_LOG_LEVEL ?? "warn", base: { nodeId } }),
  now: () => performance.now(),
  clock: () => Date.now(),
});
process.stdout.write(`molmesh gpu node ${nodeId} ready (scripted, ${DEFAULT_ADAPTER_IDS.length} adapters)\n`);
process.on("SIGTERM", () => void nc.drain().finally(() => process.exit(0)));
