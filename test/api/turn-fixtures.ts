import type { TurnRecord, TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";

const usage = (promptTokens: number, cachedPromptTokens: number, completionTokens: number) => ({
  promptTokens,
  cachedPromptTokens,
  evaluatedPromptTokens: promptTokens - cachedPromptTokens,
  completionTokens,
});

/** A routed, completed turn: route 100 prompt (90 cached) + 1 out; answer 200 prompt (150 cached) + 5 out. */
export function makeTurn(overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    turnId: "turn_01",
    conversationId: "conv_01",
    createdAt: 1_700_000_000,
    status: "completed",
    userItemId: "msg_u1",
    assistantItemId: "msg_a1",
    userText: "write a function",
    answerText: "Hello, world!",
    finishReason: "stop",
    mol: {
      turnId: "turn_01",
      harnessHash: "h_abc",
      label: "coding",
      adapter: "coding",
      revision: "rev1",
      source: "router",
      nodes: { route: "n1", answer: "n1" },
      placement: {},
      timings: { routeMs: 5, answerFirstTokenMs: 9, answerTotalMs: 40 },
      usage: { route: usage(100, 90, 1), answer: usage(200, 150, 5), summary: usage(300, 250, 30) },
      summary: { status: "pending" },
    },
    ...overrides,
  };
}

export function makeStartTurn(turn: TurnRecord = makeTurn()): TurnRecord {
  return {
    ...turn,
    status: "in_progress",
    answerText: "",
    finishReason: undefined,
    mol: { ...turn.mol, usage: { route: turn.mol.usage.route } },
  };
}

/** The parts a live turn streams: start, one delta per piece, finish. */
export function makeParts(
  pieces: string[],
  turn: TurnRecord = makeTurn({ answerText: pieces.join("") }),
): TurnStreamPart[] {
  return [
    { type: "turn-start", turn: makeStartTurn(turn) },
    ...pieces.map((delta): TurnStreamPart => ({ type: "text-delta", delta })),
    { type: "turn-finish", turn },
  ];
}

/** An async source that records whether its consumer released it, and can stall forever after `stallAfter` parts. */
export function makeSource(
  parts: readonly TurnStreamPart[],
  options: { stallAfter?: number; throwAfter?: Error } = {},
) {
  const state = { returned: 0, pulled: 0 };
  let index = 0;
  const iterator: AsyncIterator<TurnStreamPart> = {
    next: () => {
      state.pulled++;
      if (options.stallAfter !== undefined && index >= options.stallAfter)
        return new Promise(() => undefined);
      const part = parts[index++];
      if (part === undefined) {
        if (options.throwAfter !== undefined) return Promise.reject(options.throwAfter);
        return Promise.resolve({ done: true, value: undefined });
      }
      return Promise.resolve({ done: false, value: part });
    },
    return: () => {
      state.returned++;
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return { state, iterable: { [Symbol.asyncIterator]: () => iterator } };
}

export async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}
