/** Extra wait past the hop's own deadline, so the node's typed `deadline_exceeded` reply arrives first. */
export const DEFAULT_REPLY_GRACE_MS = 2_000;

export interface HopCallOptions {
  /** Override the subject (e.g. a node's own affinity subject); defaults to the queue-group subject. */
  subject?: string;
  /** Aborting cancels the hop on the node. */
  signal?: AbortSignal;
  subjectPrefix?: string;
}
