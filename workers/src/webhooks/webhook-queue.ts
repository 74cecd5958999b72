/** One queued message of an endpoint, as its delivery object stores it. */
export interface WebhookMessage {
  id: string;
  eventType: string;
  body: string;
  status: "pending" | "delivered" | "dead";
  attempts: number;
  /** Unix ms; null once delivered or dead. */
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookAttempt {
  messageId: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  outcome: "delivered" | "retry" | "dead" | "disabled";
}

/** The queue and delivery log of one endpoint. A capability type; Durable Object SQLite implements it. */
export interface WebhookQueue {
  /** False when a message with this id is already queued (re-sent events are one message). */
  enqueue(message: { id: string; eventType: string; body: string; now: number }): boolean;
  /** Pending messages due by `now`, oldest first. */
  listDue(now: number, limit: number): WebhookMessage[];
  /** Unix ms of the earliest pending attempt, if any. */
  nextDueAt(): number | undefined;
  /** Stores one attempt and the message's new state, atomically. */
  recordAttempt(
    attempt: WebhookAttempt,
    next: Pick<WebhookMessage, "status" | "attempts" | "nextAttemptAt">,
  ): void;
  /** Marks every pending message dead (the endpoint was disabled or deleted). */
  killPending(reason: string, now: number): number;
  get(id: string): WebhookMessage | undefined;
  listAttempts(id: string): WebhookAttempt[];
  list(query: { after?: string | undefined; limit: number; status?: WebhookMessage["status"] | undefined }): {
    data: WebhookMessage[];
    hasMore: boolean;
  };
  /** Queues a delivered or dead message again from the start of the schedule, keeping its id. */
  requeue(id: string, now: number): WebhookMessage | undefined;
}

/** What the API asks of one endpoint's delivery queue (a Durable Object in production). */
export interface WebhookDeliveryLog {
  enqueue(endpointId: string, message: { id: string; eventType: string; body: string }): Promise<void>;
  listMessages(query: {
    after?: string | undefined;
    limit: number;
    status?: WebhookMessage["status"] | undefined;
  }): Promise<{ data: WebhookMessage[]; hasMore: boolean }>;
  getMessage(id: string): Promise<{ message: WebhookMessage; attempts: WebhookAttempt[] } | undefined>;
  redeliver(id: string): Promise<WebhookMessage | undefined>;
}
