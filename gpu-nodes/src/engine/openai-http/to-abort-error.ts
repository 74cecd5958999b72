import { CancelledError, MolWireError } from "../../../../schema/wire/v1/index.ts";

/** The caller aborts with a typed reason (deadline, cancel) and expects that same error back. */
export function toAbortError(signal: AbortSignal): MolWireError {
  const reason: unknown = signal.reason;
  if (reason instanceof MolWireError) return reason;
  return new CancelledError("generation was cancelled", { cause: reason });
}
