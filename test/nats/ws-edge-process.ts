/**
 * The edge as a separate process: Node 20 has a global WebSocket (what `wsconnect` needs, as in workerd) only
 * with --experimental-websocket, which a vitest worker does not get. start-ws-edge.ts forks this file with it
 * and drives it over IPC; everything here uses the edge's real connection (wsconnect, its .creds) and its own
 * hop functions from workers/src/nats/.
 */
import { randomUUID } from "node:crypto";
import {
  credsAuthenticator,
  wsconnect,
  type NatsConnection,
  type PermissionViolationError,
} from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import {
  NODE_STATUS_BUCKET,
  WIRE_VERSION,
  decodeWireMessage,
  nodeStatusSchema,
} from "../../schema/wire/v2/index.ts";
import { requestGenerate } from "../../workers/src/nats/generate-client.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";
import { findPermissionViolation } from "./find-permission-violation.ts";
import { trySubscribe } from "./try-subscribe.ts";
import { watchPermissionErrors, type PermissionErrorWatch } from "./watch-permission-errors.ts";
import {
  FORGED_PAYLOAD,
  type WsEdgeCommand,
  type WsEdgeOutcome,
  type WsEdgeRequest,
  type WsEdgeResponse,
  type WsEdgeResults,
} from "./ws-edge-protocol.ts";

/** Longest wait for the bucket's initial values in the watch check. */
const WATCH_BOUND_MS = 10_000;

let nc: NatsConnection | undefined;
let wsUrl = "";
let violations: PermissionErrorWatch | undefined;

const base = () => ({
  version: WIRE_VERSION,
  type: "generate" as const,
  requestId: randomUUID(),
  slotKey: "nats-permissions",
  timeoutMs: 10_000,
});
/** To one node by its own subject, else the queue group. */
const target = (nodeId: string | undefined) => (nodeId ? { nodeId } : {});

async function run(connection: NatsConnection, watch: PermissionErrorWatch, command: WsEdgeCommand) {
  switch (command.op) {
    case "route": {
      const input = {
        ...base(),
        adapter: "l0",
        priority: "route" as const,
        prompt: "user: hello\nlabel: ",
        constraint: { type: "choice" as const, choices: ["chat", "agent", "coding", "genui"] },
        sampling: { maxTokens: 24, temperature: 0 },
      };
      const result = await requestGenerate(connection, input, target(command.nodeId));
      return { label: result.choice?.value ?? "", nodeId: result.nodeId } satisfies WsEdgeResults["route"];
    }
    case "answer": {
      const parts: Record<string, number> = {};
      let nodeId = "";
      let finishText = "";
      const input = {
        ...base(),
        adapter: "chat",
        priority: "answer" as const,
        prompt: "user: hi\nassistant:",
        sampling: { maxTokens: command.maxTokens },
      };
      for await (const part of streamGenerate(connection, input, target(command.nodeId))) {
        parts[part.type] = (parts[part.type] ?? 0) + 1;
        if (part.type === "start") nodeId = part.nodeId;
        if (part.type === "finish") finishText = part.text;
      }
      return { nodeId, parts, finishText } satisfies WsEdgeResults["answer"];
    }
    case "abort-answer": {
      const controller = new AbortController();
      const input = { ...base(), adapter: "chat", priority: "answer" as const, prompt: command.view };
      try {
        for await (const part of streamGenerate(connection, input, { signal: controller.signal })) {
          if (part.type === "text-delta") controller.abort();
        }
      } catch (error) {
        return {
          error: error instanceof Error ? error.name : String(error),
        } satisfies WsEdgeResults["abort-answer"];
      }
      throw new Error("the answer finished although it was aborted");
    }
    case "summary": {
      const input = {
        ...base(),
        adapter: "chat",
        priority: "summary" as const,
        prompt: "a conversation\nsummary:",
      };
      const result = await requestGenerate(connection, input, target(command.nodeId));
      return { nodeId: result.nodeId } satisfies WsEdgeResults["summary"];
    }
    case "read-fleet": {
      const kv = await new Kvm(connection).open(NODE_STATUS_BUCKET);
      const keys: string[] = [];
      const nodeIds: string[] = [];
      for await (const key of await kv.keys()) {
        keys.push(key);
        const entry = await kv.get(key);
        if (entry?.operation === "PUT")
          nodeIds.push(
            decodeWireMessage(nodeStatusSchema, entry.value, "reply", { anyVersion: true }).nodeId,
          );
      }
      return { keys: keys.sort(), nodeIds: nodeIds.sort() } satisfies WsEdgeResults["read-fleet"];
    }
    case "watch-fleet": {
      const kv = await new Kvm(connection).open(NODE_STATUS_BUCKET);
      const watcher = await kv.watch({ key: "node.*" });
      const keys: string[] = [];
      // Bounded: on a loaded machine the initial values can be slow; stop after a while and report what came.
      const bound = setTimeout(() => {
        watcher.stop();
      }, WATCH_BOUND_MS);
      try {
        for await (const entry of watcher) {
          if (entry.operation === "PUT" && !keys.includes(entry.key)) keys.push(entry.key);
          if (entry.delta === 0) break;
        }
      } finally {
        clearTimeout(bound);
        watcher.stop();
      }
      return { keys: keys.sort() } satisfies WsEdgeResults["watch-fleet"];
    }
    case "subscribe": {
      const { violation, subscription } = await trySubscribe(connection, command.subject, command.queue);
      if (!command.keep) subscription?.unsubscribe();
      return (violation ? { violation: toViolation(violation) } : {}) satisfies WsEdgeResults["subscribe"];
    }
    case "publish": {
      const from = watch.seen.length;
      connection.publish(command.subject, FORGED_PAYLOAD);
      // The -ERR precedes this flush's PONG; the wait only covers the status iterator's hand-over.
      await connection.flush();
      const violation = await watch
        .waitFor("publish", command.subject, { from, timeoutMs: 500 })
        .catch(() => undefined);
      return (violation ? { violation } : {}) satisfies WsEdgeResults["publish"];
    }
    case "kv-put": {
      const kv = await new Kvm(connection).open(NODE_STATUS_BUCKET);
      await kv.put(command.key, FORGED_PAYLOAD, { timeout: 2_000 });
      return null satisfies WsEdgeResults["kv-put"];
    }
    case "try-connect": {
      try {
        await (await connectOverWebSocket(wsUrl, command.creds)).close();
        return {} satisfies WsEdgeResults["try-connect"];
      } catch (error) {
        return {
          refused: error instanceof Error ? error.name : String(error),
        } satisfies WsEdgeResults["try-connect"];
      }
    }
    case "violations":
      return [...watch.seen] satisfies WsEdgeResults["violations"];
    case "close":
      await connection.close();
      return null satisfies WsEdgeResults["close"];
  }
}

function connectOverWebSocket(url: string, creds: string): Promise<NatsConnection> {
  return wsconnect({
    servers: url,
    name: "edge",
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    maxReconnectAttempts: 0,
  });
}

function toViolation(error: PermissionViolationError) {
  return {
    operation: error.operation === "subscription" ? ("subscription" as const) : ("publish" as const),
    subject: error.subject,
    ...(error.queue === undefined ? {} : { queue: error.queue }),
  };
}

function fail(error: unknown): WsEdgeOutcome<never> {
  const violation = findPermissionViolation(error);
  return {
    ok: false,
    error: {
      name: error instanceof Error ? error.name : "Error",
      message: error instanceof Error ? error.message : String(error),
      ...(violation ? { violation: toViolation(violation) } : {}),
    },
  };
}

const reply = (response: WsEdgeResponse) => process.send?.(response);

// A test process that dies without stop() must not leave this one connected.
process.on("disconnect", () => process.exit(0));

// IPC carries no types: the parent (start-ws-edge.ts) sends only WsEdgeRequest.
process.on("message", (message: WsEdgeRequest) => {
  void (async () => {
    if ("init" in message) {
      try {
        wsUrl = message.init.wsUrl;
        nc = await connectOverWebSocket(wsUrl, message.init.creds);
        violations = watchPermissionErrors(nc);
        reply({ id: 0, outcome: { ok: true, value: null } });
      } catch (error) {
        reply({ id: 0, outcome: fail(error) });
      }
      return;
    }
    if (!nc || !violations) return reply({ id: message.id, outcome: fail(new Error("not connected")) });
    try {
      reply({ id: message.id, outcome: { ok: true, value: await run(nc, violations, message.command) } });
    } catch (error) {
      reply({ id: message.id, outcome: fail(error) });
    }
    if (message.command.op === "close") process.disconnect();
  })();
});
