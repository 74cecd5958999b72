export interface EngineHttpRequest {
  method: "GET" | "POST";
  /** Serialized as JSON when present. */
  body?: unknown;
  signal?: AbortSignal;
  accept?: string;
}

export interface EngineHttpClient {
  /** Network failures reject as thrown by the injected fetch; callers decide how to map them. */
  send(path: string, request: EngineHttpRequest): Promise<Response>;
}

export function createEngineHttpClient(options: {
  fetch: typeof fetch;
  baseUrl: string;
  apiKey?: string;
}): EngineHttpClient {
  const root = options.baseUrl.replace(/\/+$/, "");
  return {
    send(path, request) {
      const headers: Record<string, string> = { accept: request.accept ?? "application/json" };
      if (request.body !== undefined) headers["content-type"] = "application/json";
      if (options.apiKey !== undefined) headers["authorization"] = `Bearer ${options.apiKey}`;
      const init: RequestInit = { method: request.method, headers };
      if (request.body !== undefined) init.body = JSON.stringify(request.body);
      if (request.signal !== undefined) init.signal = request.signal;
      return options.fetch(`${root}${path}`, init);
    },
  };
}
