import { PermissionViolationError, type NatsConnection, type Subscription } from "@nats-io/nats-core";

export interface SubscribeAttempt {
  /** The server's refusal, when it refused the subscription. */
  violation?: PermissionViolationError;
  /** The subscription, when it was accepted (the caller unsubscribes it). */
  subscription?: Subscription;
}

/**
 * Subscribes and settles whether the server accepted it. The server answers a refused SUB with -ERR before the
 * PONG of the next flush, and the client closes the subscription with that error as it reads it, so after the
 * flush the outcome is known without waiting on a timer.
 */
export async function trySubscribe(
  nc: NatsConnection,
  subject: string,
  queue?: string,
): Promise<SubscribeAttempt> {
  const subscription = nc.subscribe(subject, queue ? { queue } : {});
  await nc.flush();
  const closed = await Promise.race([subscription.closed, Promise.resolve(undefined)]);
  if (closed instanceof PermissionViolationError) return { violation: closed };
  return { subscription };
}
