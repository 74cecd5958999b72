import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "../harness/paths.ts";
import type {
  WsEdgeCommand,
  WsEdgeOutcome,
  WsEdgeRequest,
  WsEdgeResponse,
  WsEdgeResults,
} from "./ws-edge-protocol.ts";

const EDGE_PROCESS = fileURLToPath(new URL("./ws-edge-process.ts", import.meta.url));

export interface WsEdge {
  /** Runs one command on the edge's connection; a refused operation is an `ok: false` outcome, not a throw. */
  call<C extends WsEdgeCommand>(command: C): Promise<WsEdgeOutcome<WsEdgeResults[C["op"]]>>;
  /** Closes the connection and ends the process. */
  stop(): Promise<void>;
}

/**
 * Starts the edge in its own Node process connected with `wsconnect` over the WebSocket listener, with the
 * edge's credentials; see ws-edge-process.ts for why it is a process. Rejects when the connection is refused.
 */
export async function startWsEdge(options: { wsUrl: string; creds: string }): Promise<WsEdge> {
  const child = fork(EDGE_PROCESS, [], {
    cwd: REPO_ROOT,
    execArgv: ["--no-warnings", "--experimental-websocket", "--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, (outcome: WsEdgeOutcome<unknown>) => void>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      resolve();
    });
  });
  child.on("message", (response: WsEdgeResponse) => {
    pending.get(response.id)?.(response.outcome);
    pending.delete(response.id);
  });
  void exited.then(() => {
    for (const settle of pending.values()) {
      settle({ ok: false, error: { name: "EdgeProcessExited", message: "the edge process exited" } });
    }
    pending.clear();
  });
  const send = (request: WsEdgeRequest): Promise<WsEdgeOutcome<unknown>> =>
    new Promise((resolve) => {
      pending.set(request.id, resolve);
      child.send(request);
    });

  const connected = await send({ id: 0, init: options });
  if (!connected.ok) {
    child.kill();
    await exited;
    throw new Error(`edge could not connect: ${connected.error.name}: ${connected.error.message}`);
  }
  return {
    call<C extends WsEdgeCommand>(command: C) {
      // The child answers each op with WsEdgeResults[op] (ws-edge-protocol.ts); IPC carries no types.
      return send({ id: nextId++, command }) as Promise<WsEdgeOutcome<WsEdgeResults[C["op"]]>>;
    },
    async stop() {
      if (child.exitCode === null && child.connected) await send({ id: nextId++, command: { op: "close" } });
      const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
