import { PermissionViolationError } from "@nats-io/nats-core";

/** The server's permission violation anywhere in an error's cause chain (requests and JetStream wrap it). */
export function findPermissionViolation(error: unknown): PermissionViolationError | undefined {
  for (let e = error; e instanceof Error; e = e.cause) if (e instanceof PermissionViolationError) return e;
  return undefined;
}
