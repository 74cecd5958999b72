import {
  MAX_WARM_KEYS_PER_ADAPTER,
  WIRE_VERSION,
  type NodeStatus,
  type WireVersion,
} from "../../../schema/wire/v2/index.ts";
import type { Engine } from "../engine/engine.ts";
import type { Admission } from "./admission.ts";
import type { NodeLoadMeter } from "./node-load.ts";

export interface NodeStatusSource {
  nodeId: string;
  engine: Engine;
  admission: Admission;
  /** The prefill rate the heartbeat reports; without it (or before its first timed prefill) no `load`. */
  load?: NodeLoadMeter;
  startedAt: number;
  heartbeatIntervalMs: number;
  /** Wall clock (unix ms), for the informative timestamps. */
  clock: () => number;
}

/** The heartbeat body: what the edge needs to place a hop (warm keys, free slots, load). */
export function describeNodeStatus(source: NodeStatusSource): NodeStatus & { version: WireVersion } {
  const slots = source.engine.snapshot();
  const load = source.load?.describe(source.admission.serviceMs);
  return {
    version: WIRE_VERSION,
    wireVersions: [WIRE_VERSION],
    nodeId: source.nodeId,
    engine: source.engine.kind,
    baseModel: source.engine.baseModel,
    ...(source.engine.servedModel ? { servedModel: source.engine.servedModel } : {}),
    // One entry per revision held: two revisions of a label (a canary beside the default) are two entries.
    adapters: source.engine.adapters().map((adapter) => {
      const s = slots.find((x) => x.name === adapter.name);
      return {
        id: adapter.id,
        name: adapter.name,
        revision: adapter.revision,
        lora: adapter.lora,
        totalSlots: s?.totalSlots ?? 0,
        freeSlots: s?.freeSlots ?? 0,
        warmConversations: (s?.warmConversations ?? []).slice(0, MAX_WARM_KEYS_PER_ADAPTER),
      };
    }),
    // Against maxConcurrent: summaries running in a lane of their own leave a turn's room as it is.
    inFlight: source.admission.turnsInFlight,
    maxConcurrent: source.admission.maxConcurrent,
    // Hops in the fair queue and hops admitted but waiting for their slot: both are work ahead of a new hop.
    queueDepth: source.admission.queued + slots.reduce((n, s) => n + s.waiting, 0),
    ...(load ? { load } : {}),
    startedAt: source.startedAt,
    updatedAt: source.clock(),
    heartbeatIntervalMs: source.heartbeatIntervalMs,
    ...(source.engine.failedAdapters?.length
      ? {
          failedAdapters: source.engine.failedAdapters.map((a) => ({
            id: a.id,
            reason: a.reason.slice(0, 2000),
          })),
        }
      : {}),
    features: [...(source.engine.features ?? [])],
  };
}
