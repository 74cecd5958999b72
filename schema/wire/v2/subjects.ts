import { WIRE_VERSION } from "./version.ts";

export const DEFAULT_SUBJECT_PREFIX = "molmesh";
/** Queue group of the cold path: any live node of this wire version may take a request on the shared subject. */
export const NODE_QUEUE_GROUP = "molmesh-gpu-nodes";
/** JetStream KV bucket where nodes publish their heartbeats (one key per node id), whatever their wire version. */
export const NODE_STATUS_BUCKET = "molmesh_nodes";

/** Subjects carry the wire version (`v2`), so a request only ever reaches nodes that speak it. */
const version = WIRE_VERSION.split(".")[1];
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

function assertToken(kind: string, value: string): string {
  if (!TOKEN.test(value)) throw new TypeError(`${kind} "${value}" is not a valid NATS subject token`);
  return value;
}

/** `molmesh.v2.generate`: the queue-group (cold) path. */
export function buildGenerateSubject(prefix = DEFAULT_SUBJECT_PREFIX): string {
  return `${assertToken("prefix", prefix)}.${version}.generate`;
}

/** `molmesh.v2.node.<nodeId>.generate`: the affinity path to one node whose KV is warm. */
export function buildNodeGenerateSubject(nodeId: string, prefix = DEFAULT_SUBJECT_PREFIX): string {
  return `${assertToken("prefix", prefix)}.${version}.node.${assertToken("node id", nodeId)}.generate`;
}

/** `molmesh.v2.cancel`: broadcast; the node running the request id stops it, others ignore it. */
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
