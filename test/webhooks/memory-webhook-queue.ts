import type {
  WebhookAttempt,
  WebhookMessage,
  WebhookQueue,
} from "../../workers/src/webhooks/webhook-queue.ts";

/** The queue contract in memory, for the delivery logic's unit tests (the Durable Object one runs in the e2e tests). */
export function createMemoryWebhookQueue(): WebhookQueue & { attempts: WebhookAttempt[] } {
  const messages = new Map<string, WebhookMessage>();
  const attempts: WebhookAttempt[] = [];
  const pending = () => [...messages.values()].filter((m) => m.status === "pending");
  return {
    attempts,
    enqueue({ id, eventType, body, now }) {
      if (messages.has(id)) return false;
      messages.set(id, {
        ...{ id, eventType, body, status: "pending", attempts: 0, nextAttemptAt: now },
        ...{ lastStatusCode: null, lastError: null, createdAt: now, updatedAt: now },
      });
      return true;
    },
    listDue: (now, limit) =>
      pending()
        .filter((m) => (m.nextAttemptAt ?? Infinity) <= now)
        .sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0))
        .slice(0, limit),
    nextDueAt: () => {
      const times = pending().map((m) => m.nextAttemptAt ?? Infinity);
      return times.length > 0 ? Math.min(...times) : undefined;
    },
    recordAttempt(attempt, next) {
      attempts.push(attempt);
      const message = messages.get(attempt.messageId);
      if (message)
        Object.assign(message, next, { lastStatusCode: attempt.statusCode, lastError: attempt.error });
    },
    killPending(reason) {
      const killed = pending();
      for (const m of killed) Object.assign(m, { status: "dead", nextAttemptAt: null, lastError: reason });
      return killed.length;
    },
    get: (id) => messages.get(id),
    listAttempts: (id) => attempts.filter((a) => a.messageId === id),
    list: ({ limit }) => ({ data: [...messages.values()].slice(0, limit), hasMore: messages.size > limit }),
    requeue(id, now) {
      const message = messages.get(id);
      if (message) Object.assign(message, { status: "pending", attempts: 0, nextAttemptAt: now });
      return message;
    },
  };
}
