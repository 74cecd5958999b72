import { MolWireError } from "../../../../schema/wire/v1/index.ts";
import { ApiError } from "./api-error.ts";
import { mapWireErrorToApiError } from "./map-wire-error-to-api-error.ts";

/** The last line of an error handler: anything thrown becomes an ApiError; unknown failures say nothing inside. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof MolWireError) return mapWireErrorToApiError(error);
  return new ApiError({
    status: 500,
    type: "server_error",
    code: "internal_error",
    message: "the server had an error while processing the request",
    cause: error,
  });
}
