/** The outbound event types; an endpoint subscribes to a non-empty subset. */
export const WEBHOOK_EVENT_TYPES = [
  "conversation.turn.completed",
  "conversation.turn.failed",
  "conversation.summary.created",
  "harness.rolled_back",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
