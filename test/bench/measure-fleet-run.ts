export interface HopSample {
  hop: "route" | "answer";
  conversation: string;
  adapter: string;
  nodeId: string;
  promptTokens: number;
  cachedTokens: number;
  /**
   * What perfect reuse would skip: the previous hop of the same (conversation, adapter), its prompt and output,
   * capped at this prompt (the last prompt token is always evaluated). Undefined on a pair's first hop.
   */
  idealCachedTokens?: number;
  ttftMs?: number;
  /** The turn's index in its conversation, from 0. */
  turn: number;
  /** Why the edge placed it there (warm, spill, least-loaded, queue-group). */
  reason?: string;
}

type Usage = { promptTokens: number; cachedPromptTokens: number; completionTokens: number };
type Mol = {
  label: string;
  nodes: { route?: string; answer?: string };
  usage: { route?: Usage; answer?: Usage };
  timings: { routeMs?: number; answerFirstTokenMs?: number };
  placement?: { route?: { reason: string }; answer?: { reason: string } };
};

const TOPICS = [
  "write a python function",
  "plan my week",
  "build a settings page",
  "hello there",
  "refactor this",
  "call the weather tool",
];

/** Drives M conversations of T turns with C clients at a time; returns every route and answer hop, in turn order. */
export async function measureFleetRun(o: {
  baseUrl: string;
  apiKey: string;
  conversations: number;
  turns: number;
  concurrency: number;
  /** The user message of a turn; default: a short topic line. */
  inputFor?: (conversation: number, turn: number) => string;
  /** Default 32. */
  maxOutputTokens?: number;
  /** `mol:<label>` pins every turn to one specialist; default: routed. */
  model?: string;
  onConversationDone?: (done: number) => void;
}): Promise<HopSample[]> {
  const headers = { authorization: `Bearer ${o.apiKey}`, "content-type": "application/json" };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${o.baseUrl}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path} ${response.status}: ${await response.text()}`);
    return response.json() as Promise<{ id: string; mol: Mol }>;
  };
  const samples: HopSample[] = [];
  const previous = new Map<string, number>();
  /** One hop of a turn, from the turn's `mol`: its node, usage and placement reason sit under the hop's name. */
  const record = (
    hop: HopSample["hop"],
    conversation: string,
    adapter: string,
    turn: number,
    mol: Mol,
    ttftMs?: number,
  ) => {
    const nodeId = mol.nodes[hop];
    const usage = mol.usage[hop];
    const reason = mol.placement?.[hop]?.reason;
    if (!usage || !nodeId) return;
    const key = `${conversation}|${adapter}`;
    const before = previous.get(key);
    previous.set(key, usage.promptTokens + usage.completionTokens);
    samples.push({
      hop,
      conversation,
      adapter,
      nodeId,
      turn,
      promptTokens: usage.promptTokens,
      cachedTokens: usage.cachedPromptTokens,
      ...(before === undefined ? {} : { idealCachedTokens: Math.min(before, usage.promptTokens - 1) }),
      ...(ttftMs === undefined ? {} : { ttftMs }),
      ...(reason === undefined ? {} : { reason }),
    });
  };
  const conversation = async (index: number) => {
    const { id } = await post("/v1/conversations", {});
    for (let turn = 0; turn < o.turns; turn++) {
      const topic = TOPICS[(index + turn) % TOPICS.length] as string;
      const { mol } = await post("/v1/responses", {
        conversation: id,
        input: o.inputFor?.(index, turn) ?? `${topic} (${index}.${turn})`,
        max_output_tokens: o.maxOutputTokens ?? 32,
        ...(o.model ? { model: o.model } : {}),
      });
      record("route", id, "l0", turn, mol);
      const ttft = (mol.timings.routeMs ?? 0) + (mol.timings.answerFirstTokenMs ?? 0);
      record("answer", id, mol.label, turn, mol, ttft);
    }
  };
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.conversations) {
        await conversation(next++);
        o.onConversationDone?.(++done);
      }
    }),
  );
  return samples;
}
