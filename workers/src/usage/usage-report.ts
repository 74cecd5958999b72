/** What `group_by` can split usage by: the end user, the API key, the UTC day or the adapter. */
export const USAGE_GROUPS = ["user", "key", "day", "adapter"] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];

/** One tenant's usage over the UTC days `from`…`to` (both included, `YYYY-MM-DD`; open when absent). */
export interface UsageQuery {
  groupBy: UsageGroupBy;
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * The sums of one group. `requests` counts turns (each is counted once, on the adapter that answered it, so
 * per-adapter requests add up to the total); `hops` counts the model calls (route, answer, summary).
 */
export interface UsageBucket {
  /** The group's value: end user (empty when the requests named none), key id, day or adapter. */
  group: string;
  requests: number;
  hops: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** Reads usage rolled up by (tenant, key, end user, adapter, day); D1 in production. */
export interface UsageReport {
  /** One bucket per group value, in the group's order (days ascending). */
  query(tenantId: string, query: UsageQuery): Promise<UsageBucket[]>;
}
