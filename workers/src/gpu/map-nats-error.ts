import { errors as natsErrors } from "@nats-io/nats-core";
import {
  DeadlineExceededError,
  EngineFailureError,
  MolWireError,
  NoRespondersError,
} from "../../../schema/wire/v1/index.ts";

/** Turns a NATS client failure into the wire's typed errors, so callers branch on one error family. */
export function mapNatsError(error: unknown, subject: string): MolWireError {
  if (error instanceof MolWireError) return error;
  const noResponders =
    error instanceof natsErrors.NoRespondersError ||
    (error instanceof natsErrors.RequestError && error.isNoResponders());
  if (noResponders) return new NoRespondersError(`no GPU node is serving ${subject}`, { cause: error });
  if (error instanceof natsErrors.TimeoutError) {
    return new DeadlineExceededError(`no reply on ${subject} before the deadline`, { cause: error });
  }
  return new EngineFailureError(`NATS request on ${subject} failed: ${String(error)}`, { cause: error });
}
