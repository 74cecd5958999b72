import type { Engine } from "../engine/engine.ts";

/** What every hop runner needs besides its request: injected, so runners stay pure of I/O setup. */
export interface HopContext {
  engine: Engine;
  nodeId: string;
  now: () => number;
  signal: AbortSignal;
  /** When the request reached the node; queue time counts from here. */
  receivedAt: number;
}
