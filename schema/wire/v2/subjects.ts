import { WIRE_VERSION } from "./version.ts";

export type Hop = "route" | "answer" | "summary";
export const HOPS: readonly Hop[] = ["route", "answer", "summary"];

export const DEFAULT_SUBJECT_PREFIX = "molmesh";
/** Queue group of the cold path: any live node may take a hop published on the shared hop subject. */
export const NODE_QUEUE_GROUP = "molmesh-gpu-nodes";
/** JetStream KV bucket where nodes publish their heartbeats (one key per node id). */
export const NODE_STATUS_BUCKET = "molmesh_nodes";

const version = WIRE_VERSION.split(".")[1];
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

function assertToken(kind: string, value: string): string {
  if (!TOKEN.test(value)) throw new TypeError(`${kind} "${value}" is not a valid NATS subject token`);
  return value;
}

/** `molmesh.v1.hop.<hop>`: the queue-group (cold) path. */
export function buildHopSubject(hop: Hop, prefix = DEFAULT_SUBJECT_PREFIX): string {
  return `${assertToken("prefix", prefix)}.${version}.hop.${hop}`;
}

/** `molmesh.v1.node.<nodeId>.hop.<hop>`: the affinity path to one node whose KV is warm. */
export function buildNodeHopSubject(nodeId: string, hop: Hop, prefix = DEFAULT_SUBJECT_PREFIX): string {
  return `${assertToken("prefix", prefix)}.${version}.node.${assertToken("node id", nodeId)}.hop.${hop}`;
}

/** `molmesh.v1.cancel`: broadcast; the node running the request id stops it, others ignore it. */
export function buildCancelSubject(prefix = DEFAULT_SUBJECT_PREFIX): string {
  return `${assertToken("prefix", prefix)}.${version}.cancel`;
}

/** KV key of a node's heartbeat in {@link NODE_STATUS_BUCKET}. */
export function buildNodeStatusKey(nodeId: string): string {
  return `node.${assertToken("node id", nodeId)}`;
}

export function isValidSubjectToken(value: string): boolean {
  return TOKEN.test(value);
}
