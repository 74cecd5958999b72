import type { PermissionViolation } from "./watch-permission-errors.ts";

/** What the edge writes where it must not: real heartbeats and hops are wire JSON, so an observer tells them apart. */
export const FORGED_PAYLOAD = '{"forged":true}';

/** What the test asks of the edge process; each runs on the edge's one WebSocket connection. */
export type WsEdgeCommand =
  | { op: "route"; nodeId?: string }
  | { op: "answer"; nodeId?: string; maxTokens: number }
  /** Starts an answer, aborts after the first delta (the edge's cancel path), resolves with the error's name. */
  | { op: "abort-answer"; view: string }
  | { op: "summary"; nodeId?: string }
  /** What FleetObject does: keys, then get each. */
  | { op: "read-fleet" }
  /** What the fleet placement does: watch `node.*` up to the initial state. */
  | { op: "watch-fleet" }
  /**
   * Subscribes and flushes; resolves with the violation that closed the subscription, if any. `keep` leaves an
   * accepted subscription open (never answering), so a test can see whether it took messages.
   */
  | { op: "subscribe"; subject: string; queue?: string; keep?: boolean }
  /** Publishes and flushes; resolves with the violation the server reported for it, if any. */
  | { op: "publish"; subject: string }
  /** `kv.put` into the heartbeat bucket. */
  | { op: "kv-put"; key: string }
  /** Opens (and closes) a second WebSocket connection with other credentials; resolves with the refusal's name. */
  | { op: "try-connect"; creds: string }
  /** Every permission violation reported on the edge's connection so far. */
  | { op: "violations" }
  | { op: "close" };

export interface WsEdgeResults {
  route: { label: string; nodeId: string };
  answer: { nodeId: string; parts: Record<string, number>; finishText: string };
  "abort-answer": { error: string };
  summary: { nodeId: string };
  "read-fleet": { keys: string[]; nodeIds: string[] };
  "watch-fleet": { keys: string[] };
  subscribe: { violation?: PermissionViolation };
  publish: { violation?: PermissionViolation };
  "kv-put": null;
  "try-connect": { refused?: string };
  violations: PermissionViolation[];
  close: null;
}

export type WsEdgeOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: { name: string; message: string; violation?: PermissionViolation } };

/** Parent → child over IPC. The first message is always `init`. */
export type WsEdgeRequest =
  { id: 0; init: { wsUrl: string; creds: string } } | { id: number; command: WsEdgeCommand };

/** Child → parent: `id` 0 answers `init`. */
export interface WsEdgeResponse {
  id: number;
  outcome: WsEdgeOutcome<unknown>;
}
