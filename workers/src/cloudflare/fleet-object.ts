import { DurableObject } from "cloudflare:workers";
import type { NodeStatus } from "../../../schema/wire/v2/index.ts";
import type { PlacementChoice } from "../fleet/choose-node.ts";
import { createFleetPlacement } from "../fleet/create-fleet-placement.ts";
import type { FleetHealth } from "../fleet/fleet-view.ts";
import type { HopPlacement, PlacementRequest } from "../fleet/hop-placement.ts";
import { connectNatsFromConfig, type NatsConnector } from "./connect-nats.ts";
import { edgeConfigOf, type Env } from "./env.ts";

/** Placements whose hop has not settled yet, kept for their settle call; past this the oldest are dropped. */
const MAX_OPEN_PLACEMENTS = 10_000;

/** A placement as it crosses RPC: the choice, and the ticket its settle call names. */
export type PlacedTicket = PlacementChoice & { ticket?: number };

/** The fleet object of a colo: conversation objects name it by the colo they run in (see fleetObjectName). */
export function fleetObjectName(colo: string | undefined): string {
  return `colo:${colo ?? "local"}`;
}

/**
 * The fleet of one colo, adapted to a Durable Object: one NATS connection and one watch on the heartbeat bucket,
 * and placement (filters, scorers, picker, and the ledger of recent hops) for every conversation object of the colo.
 * A conversation object asks it once per hop attempt and tells it when the hop ended; the hop itself goes from the
 * conversation object to the node. Storage, alarms: none; all of it is in memory and rebuilt from the bucket.
 */
export class FleetObject extends DurableObject<Env> {
  readonly #nats: NatsConnector;
  readonly #placement: HopPlacement & { watching(): boolean };
  readonly #open = new Map<number, (heldTokens?: number) => void>();
  #nextTicket = 1;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const config = edgeConfigOf(env);
    this.#nats = connectNatsFromConfig(config, `molmesh-edge-fleet-${ctx.id.toString().slice(0, 12)}`);
    this.#placement = createFleetPlacement({
      connection: () => this.#nats.get(),
      staleAfterMs: config.placement.fleetStaleMs,
      now: Date.now,
    });
  }

  async health(): Promise<FleetHealth> {
    let nodes: readonly NodeStatus[];
    try {
      nodes = await this.#placement.nodes();
    } catch (error) {
      return { nats: "unreachable", liveNodes: 0, nodes: [], detail: String(error) };
    }
    return { nats: "ok", liveNodes: nodes.length, nodes: [...nodes] };
  }

  async nodes(): Promise<NodeStatus[]> {
    return [...(await this.#placement.nodes())];
  }

  async place(request: PlacementRequest): Promise<PlacedTicket> {
    const { settle, ...choice } = await this.#placement.place(request);
    if (choice.nodeId === undefined) return choice;
    const ticket = this.#nextTicket++;
    this.#open.set(ticket, settle);
    if (this.#open.size > MAX_OPEN_PLACEMENTS) {
      // A conversation object that died mid-hop never settles; the ledger stops counting such a hop after its window.
      const oldest = this.#open.keys().next();
      if (oldest.done !== true) this.#open.delete(oldest.value);
    }
    return { ...choice, ticket };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async settle(ticket: number, heldTokens?: number): Promise<void> {
    const settle = this.#open.get(ticket);
    this.#open.delete(ticket);
    settle?.(heldTokens);
  }

  /** Whether the colo's heartbeat watch is running (tests and `/healthz` detail). */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async watching(): Promise<boolean> {
    return this.#placement.watching();
  }
}
