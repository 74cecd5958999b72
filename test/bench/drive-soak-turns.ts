import { EventSourceParserStream } from "eventsource-parser/stream";

/** What one client saw of one turn, as the reconciliation needs it. */
export interface SoakTurn {
  conversation: string;
  /** The turn's place in its conversation, from 0. */
  index: number;
  input: string;
  /** From `response.created`; absent when no attempt got that far. */
  responseId?: string;
  /** `completed` and `incomplete` are acknowledged: the client holds an answer the store must hold too. */
  outcome: "completed" | "incomplete" | "failed" | "error";
  /** The answer the client assembled from its deltas (acknowledged turns). */
  text?: string;
  /** Why the last attempt did not end acknowledged: `http_503_overloaded`, `failed_engine_failure`, … */
  errorKind?: string;
  /** Every attempt's error kind, the retried ones included. */
  attemptErrors: string[];
  ms: number;
  /** Seconds since the soak began when the turn ended, to line errors up with the faults. */
  endedAtS: number;
  takeovers: number;
  /** Breaks of the stream contract: events twice or missing, final text not the deltas. */
  anomalies: string[];
}

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
const MAX_ATTEMPTS = 4;
const TOPICS = ["hello there", "write a python function", "plan my week", "build a settings page"];

type Final = {
  id?: string;
  output?: Array<{ content?: Array<{ text?: string }> }>;
  error?: { code?: string } | null;
  mol?: { takeovers?: unknown[] };
};

/**
 * One streamed turn as a careful client runs it: an Idempotency-Key per turn, the same key on every retry of a
 * refused or cut request (so a retry can never make a second turn), no retry once the turn failed on its own.
 */
export async function runSoakTurn(o: {
  baseUrl: string;
  apiKey: string;
  conversation: string;
  index: number;
  maxOutputTokens: number;
  /** `performance.now()` when the soak began. */
  epoch: number;
}): Promise<SoakTurn> {
  const input = `${TOPICS[o.index % TOPICS.length] as string} (${o.conversation} #${o.index})`;
  const started = performance.now();
  const turn: SoakTurn = {
    conversation: o.conversation,
    index: o.index,
    input,
    outcome: "error",
    attemptErrors: [],
    ms: 0,
    endedAtS: 0,
    takeovers: 0,
    anomalies: [],
  };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const retry = await attemptTurn(o, input, turn);
    if (!retry || attempt === MAX_ATTEMPTS) break;
    await new Promise((r) => setTimeout(r, 250 * attempt));
  }
  turn.ms = performance.now() - started;
  turn.endedAtS = Math.round((performance.now() - o.epoch) / 100) / 10;
  return turn;
}

/** One attempt; true when it is worth another with the same key. */
async function attemptTurn(
  o: Parameters<typeof runSoakTurn>[0],
  input: string,
  turn: SoakTurn,
): Promise<boolean> {
  const fail = (kind: string, retry: boolean) => {
    turn.outcome = "error";
    turn.errorKind = kind;
    turn.attemptErrors.push(kind);
    return retry;
  };
  let response: Response;
  try {
    response = await fetch(`${o.baseUrl}/v1/responses`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${o.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": `${o.conversation}-${o.index}`,
      },
      body: JSON.stringify({
        conversation: o.conversation,
        input,
        stream: true,
        max_output_tokens: o.maxOutputTokens,
      }),
    });
  } catch (error) {
    return fail(`fetch_${readCause(error)}`, true);
  }
  if (!response.ok || !response.body) {
    return fail(
      `http_${response.status}_${await readErrorCode(response)}`,
      RETRIED_STATUSES.has(response.status),
    );
  }
  const counts = new Map<string, number>();
  let deltas = "";
  let final: Final | undefined;
  try {
    const events = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream());
    const reader = events.getReader();
    for (;;) {
      const { done, value: message } = await reader.read();
      if (done) break;
      const name = message.event ?? "message";
      counts.set(name, (counts.get(name) ?? 0) + 1);
      const data = JSON.parse(message.data) as { delta?: string; response?: Final };
      if (name === "response.created" && data.response?.id) turn.responseId = data.response.id;
      if (name === "response.output_text.delta") deltas += data.delta ?? "";
      if (name === "response.completed" || name === "response.incomplete" || name === "response.failed")
        final = data.response;
    }
  } catch (error) {
    return fail(`stream_${readCause(error)}`, true);
  }
  const count = (name: string) => counts.get(name) ?? 0;
  const terminal = count("response.completed") + count("response.incomplete") + count("response.failed");
  if (count("response.created") !== 1) turn.anomalies.push(`response.created ×${count("response.created")}`);
  if (terminal > 1) turn.anomalies.push(`terminal events ×${terminal}`);
  if (count("response.output_item.added") > 1)
    turn.anomalies.push(`output_item.added ×${count("response.output_item.added")}`);
  if (!final) return fail("stream_cut_before_terminal_event", true);
  turn.takeovers = final.mol?.takeovers?.length ?? 0;
  if (count("response.failed") > 0) {
    turn.outcome = "failed";
    turn.errorKind = `failed_${final.error?.code ?? "unknown"}`;
    turn.attemptErrors.push(turn.errorKind);
    return false;
  }
  const text = final.output?.[0]?.content?.[0]?.text ?? "";
  if (text !== deltas) turn.anomalies.push("final text is not the deltas");
  turn.outcome = count("response.completed") > 0 ? "completed" : "incomplete";
  turn.text = text;
  delete turn.errorKind;
  return false;
}

/** The OpenAI envelope's code or type; a body that is no envelope (a proxy's, workerd's own) by its first words. */
async function readErrorCode(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { code?: string | null; type?: string } };
    return body.error?.code ?? body.error?.type ?? "no_code";
  } catch {
    return `text:${text.slice(0, 40).replace(/\s+/g, "_")}`;
  }
}

function readCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code =
    typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined;
  return code ?? (cause instanceof Error ? cause.name : "error");
}

/**
 * `turns` turns in conversations of `turnsPerConversation`, `concurrency` clients at a time, each client running
 * one conversation's turns back to back. Calls `onTurn` after each turn (the chaos schedule counts them).
 */
export async function driveSoakTurns(o: {
  baseUrl: string;
  apiKey: string;
  turns: number;
  turnsPerConversation: number;
  concurrency: number;
  maxOutputTokens: number;
  epoch: number;
  /** True once the run's time is up: no client starts another turn, the report covers those driven. */
  stopped: () => boolean;
  onTurn: (turn: SoakTurn, done: number) => void;
}): Promise<{ turns: SoakTurn[]; conversations: string[]; conversationErrors: string[] }> {
  const turns: SoakTurn[] = [];
  const conversations: string[] = [];
  const conversationErrors: string[] = [];
  let claimed = 0;
  const createConversation = async (): Promise<string | undefined> => {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        const response = await fetch(`${o.baseUrl}/v1/conversations`, {
          method: "POST",
          headers: { authorization: `Bearer ${o.apiKey}`, "content-type": "application/json" },
          body: "{}",
        });
        if (response.ok) return ((await response.json()) as { id: string }).id;
        conversationErrors.push(`http_${response.status}_${await readErrorCode(response)}`);
      } catch (error) {
        conversationErrors.push(`fetch_${readCause(error)}`);
      }
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
    return undefined;
  };
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (claimed < o.turns && !o.stopped()) {
        const size = Math.min(o.turnsPerConversation, o.turns - claimed);
        claimed += size;
        const id = await createConversation();
        if (!id) continue;
        conversations.push(id);
        for (let index = 0; index < size && !o.stopped(); index++) {
          const turn = await runSoakTurn({ ...o, conversation: id, index });
          turns.push(turn);
          o.onTurn(turn, turns.length);
        }
      }
    }),
  );
  return { turns, conversations, conversationErrors };
}
