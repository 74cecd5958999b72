import type { NodeStatus } from "../../../schema/wire/v1/index.ts";

export interface FleetHealth {
  nats: "ok" | "unreachable";
  liveNodes: number;
  nodes: NodeStatus[];
  detail?: string;
}
