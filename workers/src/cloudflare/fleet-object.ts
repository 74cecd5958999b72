import { DurableObject } from "cloudflare:workers";
import { Kvm } from "@nats-io/kv";
import {
  NODE_STATUS_BUCKET,
  decodeWireMessage,
  nodeStatusSchema,
  type NodeStatus,
} from "../../../schema/wire/v2/index.ts";
import type { FleetHealth } from "../fleet/fleet-view.ts";
import { connectNatsFromEnv, type NatsConnector } from "./connect-nats.ts";
import type { Env } from "./env.ts";

/**
 * The edge's view of the GPU fleet, read from the nodes' heartbeats in JetStream KV. The bucket's TTL drops a
 * node that stopped beating, so every entry here is a live node.
 */
export class FleetObject extends DurableObject<Env> {
  readonly #nats: NatsConnector;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#nats = connectNatsFromEnv(env, "molmesh-edge-fleet");
  }

  async health(): Promise<FleetHealth> {
    let nodes: NodeStatus[];
    try {
      nodes = await this.#readNodes();
    } catch (error) {
      return { nats: "unreachable", liveNodes: 0, nodes: [], detail: String(error) };
    }
    return { nats: "ok", liveNodes: nodes.length, nodes };
  }

  async #readNodes(): Promise<NodeStatus[]> {
    const nc = await this.#nats.get();
    let kv;
    try {
      kv = await new Kvm(nc).open(NODE_STATUS_BUCKET);
    } catch {
      return []; // no node ever started: the bucket does not exist yet
    }
    const nodes: NodeStatus[] = [];
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (entry?.operation !== "PUT") continue;
      try {
        nodes.push(decodeWireMessage(nodeStatusSchema, entry.value, "reply", { anyVersion: true }));
      } catch {
        // A node on another wire version is not part of this edge's fleet.
      }
    }
    return nodes;
  }
}
