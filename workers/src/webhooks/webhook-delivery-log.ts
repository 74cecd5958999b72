import type { WebhookAttempt, WebhookMessage } from "./webhook-queue.ts";

/** What the API asks of one endpoint's delivery queue (a Durable Object in production). */
export interface WebhookDeliveryLog {
  enqueue(endpointId: string, message: { id: string; eventType: string; body: string }): Promise<void>;
  listMessages(query: {
    after?: string;
    limit: number;
    status?: WebhookMessage["status"];
  }): Promise<{ data: WebhookMessage[]; hasMore: boolean }>;
  getMessage(id: string): Promise<{ message: WebhookMessage; attempts: WebhookAttempt[] } | undefined>;
  redeliver(id: string): Promise<WebhookMessage | undefined>;
}
