import type { FetchLike } from "../../infra/cli/cli-io.ts";

export interface RecordedRequest {
  method: string;
  origin: string;
  /** Path and query, e.g. `/v1/conversations?limit=5`. */
  path: string;
  authorization: string | null;
  body: unknown;
  signal: AbortSignal;
}

export type MeshHandler = (request: RecordedRequest) => Response | Promise<Response>;

export async function recordRequest(request: Request): Promise<RecordedRequest> {
  const url = new URL(request.url);
  const text = await request.text();
  return {
    method: request.method,
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    authorization: request.headers.get("authorization"),
    body: text === "" ? undefined : (JSON.parse(text) as unknown),
    signal: request.signal,
  };
}

/**
 * A fetch that answers from `handle` without a network. An aborted request errors its body, as a real fetch
 * does, so a cancel reaches the server side's stream (and its source) the way a dropped connection would.
 */
export function createRecordingFetch(handle: MeshHandler): { fetch: FetchLike; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const fetch: FetchLike = async (input, init) => {
    const recorded = await recordRequest(new Request(input, init));
    requests.push(recorded);
    const response = await handle(recorded);
    const signal = init?.signal;
    if (response.body === null || signal === undefined || signal === null) return response;
    const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(), { signal });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch, requests };
}
