import { HttpResponse } from "msw";

/**
 * Replies shaped like the real servers (vLLM ≥0.10 `serving_completion.py`, llama.cpp `server-task.cpp`).
 * vLLM puts the finish_reason on the last token's chunk and sends usage in a separate `choices: []` chunk;
 * llama-server's /v1/completions puts usage (and `timings`) on the finish chunk itself.
 */
const CREATED = 1767225600;
const encoder = new TextEncoder();

export interface UsageCounts {
  prompt: number;
  completion: number;
  /** null: vLLM without --enable-prompt-tokens-details sends `prompt_tokens_details: null`. */
  cached: number | null;
}

export function toSseFrames(payloads: readonly unknown[], done = true): string[] {
  const frames = payloads.map((payload) => `data: ${JSON.stringify(payload)}\n\n`);
  return done ? [...frames, "data: [DONE]\n\n"] : frames;
}

export function vllmCompletionPayloads(options: {
  model: string;
  pieces: readonly string[];
  finishReason: string;
  usage: UsageCounts;
}): unknown[] {
  const head = { id: "cmpl-5f0c9b7e2d1a4c3b8e6f1a2b3c4d5e6f", object: "text_completion", created: CREATED };
  const chunks = options.pieces.map((text, index) => {
    const last = index === options.pieces.length - 1;
    const finish = last ? options.finishReason : null;
    const choice = { index: 0, text, logprobs: null, finish_reason: finish, stop_reason: null };
    return { ...head, model: options.model, choices: [choice] };
  });
  const { prompt, completion, cached } = options.usage;
  const usage = {
    prompt_tokens: prompt,
    total_tokens: prompt + completion,
    completion_tokens: completion,
    prompt_tokens_details: cached === null ? null : { cached_tokens: cached },
  };
  return [...chunks, { ...head, model: options.model, choices: [], usage }];
}

export function llamaServerCompletionPayloads(options: {
  pieces: readonly string[];
  finishReason: string;
  /** undefined: an older build without OpenAI usage, only `timings`. */
  usage?: UsageCounts;
  timings: { cache_n: number; prompt_n: number; predicted_n: number };
}): unknown[] {
  const head = {
    created: CREATED,
    model: "qwen2.5-0.5b-instruct-q8_0.gguf",
    system_fingerprint: "b7100-4f2a9c1",
    object: "text_completion",
    id: "chatcmpl-Xq3ZP0v9hT1mLk2RbW7c",
  };
  const chunks = options.pieces.map((text) => ({
    ...head,
    choices: [{ text, index: 0, logprobs: null, finish_reason: null }],
  }));
  const final: Record<string, unknown> = {
    ...head,
    choices: [{ text: "", index: 0, logprobs: null, finish_reason: options.finishReason }],
    timings: {
      ...options.timings,
      prompt_ms: 12.5,
      prompt_per_token_ms: 0.8,
      prompt_per_second: 1250,
      predicted_ms: 30.1,
      predicted_per_token_ms: 10,
      predicted_per_second: 100,
    },
  };
  if (options.usage !== undefined) {
    const { prompt, completion, cached } = options.usage;
    final["usage"] = {
      completion_tokens: completion,
      prompt_tokens: prompt,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached ?? 0 },
    };
  }
  return [...chunks, final];
}

/** A body that delivers one frame per read, optionally split mid-frame to exercise the SSE buffering. */
export function frameStream(
  frames: readonly string[],
  ending: { kind: "close" } | { kind: "error"; error: Error } | { kind: "hang" } = { kind: "close" },
): ReadableStream<Uint8Array> {
  const queue = [...frames];
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next !== undefined) {
        controller.enqueue(encoder.encode(next));
        return;
      }
      if (ending.kind === "close") {
        controller.close();
        return;
      }
      // Erroring discards chunks still queued in the pipe: fail a moment later, as a reset connection does.
      if (ending.kind === "error") {
        return new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() =>
          controller.error(ending.error),
        );
      }
      return new Promise<void>(() => undefined);
    },
  });
}

export function sseResponse(
  body: readonly string[] | ReadableStream<Uint8Array>,
): HttpResponse<ReadableStream> {
  const stream = body instanceof ReadableStream ? body : frameStream(body);
  return new HttpResponse(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
  });
}

export function vllmErrorResponse(
  status: number,
  message: string,
  type: string,
  param: string | null = null,
) {
  return HttpResponse.json({ error: { message, type, param, code: status } }, { status });
}

export function llamaServerErrorResponse(
  status: number,
  message: string,
  type: string,
  extra: Record<string, unknown> = {},
) {
  return HttpResponse.json({ error: { code: status, message, type, ...extra } }, { status });
}

const PERMISSION = {
  id: "modelperm-0d1c2b3a",
  object: "model_permission",
  created: CREATED,
  allow_create_engine: false,
  allow_sampling: true,
  allow_logprobs: true,
  allow_search_indices: false,
  allow_view: true,
  allow_fine_tuning: false,
  organization: "*",
  group: null,
  is_blocking: false,
};

export function vllmModelList(base: string, loras: ReadonlyArray<{ name: string; path: string }>) {
  const card = (id: string, root: string, parent: string | null, maxModelLen: number | null) => ({
    id,
    object: "model",
    created: CREATED,
    owned_by: "vllm",
    root,
    parent,
    max_model_len: maxModelLen,
    permission: [PERMISSION],
  });
  return {
    object: "list",
    data: [card(base, `/models/${base}`, null, 4096), ...loras.map((l) => card(l.name, l.path, base, null))],
  };
}

/** GET /lora-adapters; scale 1.0 is what --lora applies unless --lora-init-without-apply. */
export function llamaServerLoraList(paths: readonly string[]) {
  return paths.map((path, id) => ({ id, path, scale: 1.0, task_name: "", prompt_prefix: "" }));
}

/** GET /slots: one entry per `--parallel` slot, idle (fields as llama.cpp's server sends them, abridged). */
export function llamaServerSlotList(count: number) {
  return Array.from({ length: count }, (_, id) => ({
    id,
    id_task: -1,
    n_ctx: 4096,
    speculative: false,
    is_processing: false,
  }));
}

/** A clock that returns the given instants in order, then keeps returning the last one. */
export function createQueuedClock(instants: readonly number[]): () => number {
  const queue = [...instants];
  let last = 0;
  return () => {
    last = queue.shift() ?? last;
    return last;
  };
}

/** msw patches globalThis.fetch in listen(): resolve it per call, never capture it early. */
export const interceptedFetch: typeof fetch = (input, init) => globalThis.fetch(input, init);
