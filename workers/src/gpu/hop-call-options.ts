/** Extra wait past the hop's own deadline, so the node's typed `deadline_exceeded` reply arrives first. */
export const DEFAULT_REPLY_GRACE_MS = 2_000;

export interface HopCallOptions {
  /** Override the subject (e.g. a node's own affinity subject); defaults to the queue-group subject. */
  subject?: string;
  /** Aborting cancels the hop on the node. */
  signal?: AbortSignal;
  subjectPrefix?: string;
  /**
   * Answer hop: how long to wait for the node's first part (`start`, sent as soon as it accepts the hop). A node
   * that says nothing by then is taken as hung, so the hop can go elsewhere before any text was shown.
   */
  firstPartTimeoutMs?: number;
  /** Answer hop: the longest silence between two parts once streaming; past it the node is taken as lost. */
  stallTimeoutMs?: number;
}
