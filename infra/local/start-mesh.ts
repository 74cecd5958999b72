/**
 * `npm start`: the whole local mesh on embedded defaults, with health checks and a clean Ctrl-C.
 * Today: nats-server (client + WebSocket + JetStream) and MOL_GPU_NODES GPU node processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { FIXTURE_MODEL_PATH, LOCAL_MODELS_DIR, REPO_ROOT } from "./repo-paths.ts";
import { LOCAL_NATS_CONFIG, spawnNatsServer } from "./spawn-nats-server.ts";
import { resolveLocalModels } from "./resolve-local-models.ts";

const env = process.env;
const natsPort = Number(env.MOL_NATS_PORT ?? 4222);
const natsWsPort = Number(env.MOL_NATS_WS_PORT ?? 8089);
const nodeCount = Number(env.MOL_GPU_NODES ?? 1);
const NODE_READY_TIMEOUT_MS = 120_000;
const say = (line: string) => process.stdout.write(`[molmesh] ${line}\n`);

const children: ChildProcess[] = [];
let shuttingDown = false;

const models = await resolveLocalModels(env, {
  modelsDir: LOCAL_MODELS_DIR,
  fixturePath: FIXTURE_MODEL_PATH,
});
if (models.generated) {
  say("No MOL_BASE_MODEL given: using the project's generated tiny llama. Its weights are RANDOM:");
  say("answers are noise; routing, streaming, KV reuse and the APIs are real. To use a real model:");
  say(
    "  MOL_BASE_MODEL=/path/model.gguf (or hf:<user>/<repo>/<file>.gguf) MOL_ADAPTER_CHAT=/path/lora.gguf … npm start",
  );
  say(
    "  or MOL_ENGINE=openai-http MOL_ENGINE_FLAVOR=vllm|llama-server MOL_ENGINE_URL=http://host:port MOL_ENGINE_MODEL=<name> npm start",
  );
}

const storeDir = join(REPO_ROOT, ".cache", "nats");
await mkdir(storeDir, { recursive: true });
const nats = await spawnNatsServer({
  configPath: LOCAL_NATS_CONFIG,
  port: natsPort,
  wsPort: natsWsPort,
  storeDir,
});
const natsUrl = `nats://127.0.0.1:${natsPort}`;
say(`nats-server up: ${natsUrl} (WebSocket ws://127.0.0.1:${natsWsPort}, JetStream in ${storeDir})`);

const startNode = (index: number): Promise<void> => {
  const nodeId = `local-${index}`;
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "gpu-nodes", "src", "main.ts")], {
    cwd: REPO_ROOT,
    env: { ...env, ...models.env, MOL_NODE_ID: nodeId, MOL_NATS_URL: natsUrl },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${nodeId} not ready in ${NODE_READY_TIMEOUT_MS} ms`)),
      NODE_READY_TIMEOUT_MS,
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      process.stdout.write(text.replace(/^(?=.)/gm, `[${nodeId}] `));
      if (text.includes(`molmesh gpu node ${nodeId} ready`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (!shuttingDown) reject(new Error(`${nodeId} exited with code ${code}`));
    });
  });
};

const shutdown = async (code: number): Promise<never> => {
  shuttingDown = true;
  say("stopping…");
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 15_000).unref();
        }),
    ),
  );
  await nats.stop();
  say("stopped");
  process.exit(code);
};
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

try {
  await Promise.all(Array.from({ length: nodeCount }, (_, i) => startNode(i + 1)));
} catch (error) {
  say(`start failed: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
}
say(`ready: ${nodeCount} GPU node(s) on ${models.description}`);
say(`try a hop: npm run hop -- route "write a python function"   (Ctrl-C stops everything)`);
