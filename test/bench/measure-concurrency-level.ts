import { percentile, round } from "./stats.ts";

export interface ConcurrencyLevelResult {
  concurrency: number;
  /** Turns attempted: concurrency × turns per client. */
  turns: number;
  okTurns: number;
  /**
   * Failed turns by HTTP status and error code, `+ retry-after` when the answer carried one (`503 overloaded +
   * retry-after`, `network`); none retried.
   */
  errors: Record<string, number>;
  /** Unmeasured turns each client made first (its conversation's cold prefill), and how many of them failed. */
  warmupTurns: number;
  warmupFailed: number;
  /** Answer tokens of the successful turns (`usage.output_tokens`). */
  outputTokens: number;
  wallSeconds: number;
  turnsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
}

type Post = (path: string, body: unknown) => Promise<Response>;

const CREATE_PARALLELISM = 16;
const CREATE_ATTEMPTS = 3;

async function createConversation(post: Post): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const response = await post("/v1/conversations", {});
    if (response.ok) return ((await response.json()) as { id: string }).id;
    const text = await response.text();
    if (attempt >= CREATE_ATTEMPTS) throw new Error(`POST /v1/conversations: ${response.status} ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * C clients at once, each with its own conversation, each sending its next message the moment the previous answer
 * ends. A failed turn is counted under its status and code and the client carries on: an `overloaded` answer is a
 * figure of this benchmark, not something to hide with retries.
 */
export async function measureConcurrencyLevel(o: {
  post: Post;
  concurrency: number;
  turnsPerClient: number;
  /**
   * Turns each client makes before the measured ones, all clients at once: a conversation's first turn evaluates
   * its whole views (route, answer, summary) from empty KV slots, later turns only what the turn added. Default 0.
   */
  warmupTurnsPerClient?: number;
  /** Runs between the warm-up turns and the measured ones (e.g. waits for the node to go idle). */
  afterWarmup?: () => Promise<void>;
  maxOutputTokens: number;
  onTurn?: () => void;
}): Promise<ConcurrencyLevelResult> {
  // Created a few at a time and retried: setting up the clients is not what a level measures.
  const conversations: string[] = [];
  for (let i = 0; i < o.concurrency; i += CREATE_PARALLELISM) {
    const batch = Math.min(CREATE_PARALLELISM, o.concurrency - i);
    conversations.push(
      ...(await Promise.all(Array.from({ length: batch }, () => createConversation(o.post)))),
    );
  }
  const send = (conversation: string, client: number, turn: number) =>
    o.post("/v1/responses", {
      conversation,
      input: `client ${client}, message ${turn}: what should I do next?`,
      max_output_tokens: o.maxOutputTokens,
    });
  const warmupTurns = o.warmupTurnsPerClient ?? 0;
  let warmupFailed = 0;
  await Promise.all(
    conversations.map(async (conversation, client) => {
      for (let turn = 0; turn < warmupTurns; turn++) {
        const ok = await send(conversation, client, turn).then(
          async (response) => (await response.text(), response.ok),
          () => false,
        );
        if (!ok) warmupFailed++;
      }
    }),
  );
  await o.afterWarmup?.();
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let outputTokens = 0;
  const fail = (key: string) => (errors[key] = (errors[key] ?? 0) + 1);
  const started = performance.now();
  await Promise.all(
    conversations.map(async (conversation, client) => {
      for (let turn = warmupTurns; turn < warmupTurns + o.turnsPerClient; turn++) {
        const sent = performance.now();
        try {
          const response = await send(conversation, client, turn);
          const text = await response.text();
          const body = parseBody(text);
          if (response.ok) {
            latencies.push(performance.now() - sent);
            outputTokens += body?.usage?.output_tokens ?? 0;
          } else {
            const hint = response.headers.has("retry-after") ? " + retry-after" : "";
            fail(`${response.status} ${body?.error?.code ?? `"${text.slice(0, 40)}"`}${hint}`);
          }
        } catch (error) {
          fail(`network (${describeFetchFailure(error)})`);
        }
        o.onTurn?.();
      }
    }),
  );
  const wallSeconds = (performance.now() - started) / 1000;
  return {
    concurrency: o.concurrency,
    turns: o.concurrency * o.turnsPerClient,
    okTurns: latencies.length,
    errors,
    warmupTurns: o.concurrency * warmupTurns,
    warmupFailed,
    outputTokens,
    wallSeconds: round(wallSeconds, 2),
    turnsPerSecond: round(latencies.length / wallSeconds, 2),
    p50Ms: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
  };
}

/** undici's fetch throws `TypeError: fetch failed` with the socket's error as its cause. */
function describeFetchFailure(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error)
    return "code" in cause && typeof cause.code === "string" ? cause.code : cause.message;
  return String(cause);
}

/** An error from `wrangler dev` itself (a restarted worker) is plain text, not the API's JSON envelope. */
function parseBody(
  text: string,
): { error?: { code?: string | null }; usage?: { output_tokens?: number } } | undefined {
  try {
    return JSON.parse(text) as { error?: { code?: string | null }; usage?: { output_tokens?: number } };
  } catch {
    return undefined;
  }
}
