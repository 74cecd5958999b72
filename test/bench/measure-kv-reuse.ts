import type { NatsConnection } from "@nats-io/nats-core";
import { answerInput } from "../harness/generate-requests.ts";
import { collectTimedAnswer, type TimedAnswer } from "./collect-timed-answer.ts";
import type { BenchExchange } from "./render-naive-view.ts";
import { round } from "./stats.ts";

export interface KvReuseRow {
  adapter: string;
  turns: number;
  promptTokens: number;
  cachedPromptTokens: number;
  idealCachedTokens: number;
  cachedShareOfPrompt: number;
  shareOfIdeal: number;
}

/**
 * One conversation of `turns` answer hops on one adapter, its prompt rendered each turn by `renderView`. The ideal
 * reuses everything already in the slot: the previous prompt plus the previous answer (capped: the last prompt
 * token is always evaluated), which only an append-only view can reach.
 */
export async function measureKvReuse(o: {
  client: NatsConnection;
  adapter: string;
  conversationId: string;
  turns: number;
  renderView: (history: readonly BenchExchange[], user: string) => string;
  /** Greedy by default; a sampled run draws tokens the tokenizer would not make of the answer's text more often. */
  sampling?: { temperature: number; seed: number };
  onTurn?: (answer: TimedAnswer) => void;
}): Promise<KvReuseRow> {
  const history: BenchExchange[] = [];
  let prompt = 0;
  let cached = 0;
  let ideal = 0;
  let previous = { prompt: 0, completion: 0 };
  for (let turn = 0; turn < o.turns; turn++) {
    const user = `turn ${turn}, please continue.`;
    const answer = await collectTimedAnswer(
      o.client,
      answerInput(o.conversationId, o.adapter, o.renderView(history, user), {
        sampling: { maxTokens: 16, temperature: 0, ...o.sampling },
      }),
    );
    const { text, finish } = answer;
    prompt += finish.usage.promptTokens;
    cached += finish.usage.cachedPromptTokens;
    ideal += turn === 0 ? 0 : Math.min(previous.prompt + previous.completion, finish.usage.promptTokens - 1);
    previous = { prompt: finish.usage.promptTokens, completion: finish.usage.completionTokens };
    history.push({ user, answer: text });
    o.onTurn?.(answer);
  }
  return {
    adapter: o.adapter,
    turns: o.turns,
    promptTokens: prompt,
    cachedPromptTokens: cached,
    idealCachedTokens: ideal,
    cachedShareOfPrompt: round(cached / prompt, 3),
    shareOfIdeal: round(cached / ideal, 3),
  };
}
