import OpenAI from "openai";
import type { FetchLike } from "./cli-io.ts";
import type { Connection } from "./resolve-connection.ts";

/**
 * The official client pointed at the mesh. No retries: a retried turn would be a second turn, and a person at
 * a prompt is better served by the error at once than by a silent wait.
 */
export function createMeshClient(connection: Connection, fetch: FetchLike): OpenAI {
  return new OpenAI({
    baseURL: `${connection.baseUrl}/v1`,
    apiKey: connection.apiKey,
    fetch,
    maxRetries: 0,
    // A turn streams for as long as the answer takes; the mesh enforces its own hop deadlines.
    timeout: 10 * 60_000,
  });
}
