import { ProtocolError } from "../../../../schema/wire/v2/index.ts";
import { type ApiError, type TurnError, mapTurnErrorToApiError, toApiError } from "../errors/api-error.ts";

/** A turn-error part, seen the way a client sees it: the public message, not the node's. */
export function describeTurnError(error: TurnError): ApiError {
  return mapTurnErrorToApiError(error);
}

/** The source ended without `turn-finish` or `turn-error`: never pass a partial answer off as whole. */
export function describeEarlyEnd(): ApiError {
  return toApiError(new ProtocolError("the answer stream ended before the turn finished"));
}

/** Whatever the source threw (a wire error, an ApiError, a bug), as the client may see it. */
export function describeSourceFailure(error: unknown): ApiError {
  return toApiError(error);
}
