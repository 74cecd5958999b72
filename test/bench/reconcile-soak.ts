import type { SoakTurn } from "./drive-soak-turns.ts";

/** Counts of every way the store and what the clients saw disagree; a clean soak has all of them at 0. */
export interface SoakReconciliation {
  conversations: number;
  acknowledged: number;
  /** Acknowledged answers with no assistant item (or no user item) in the store. */
  lost: number;
  /** Item ids listed twice, a turn with two assistant items, or items no client turn accounts for. */
  duplicated: number;
  /** The stored answer or user message is not the text the client saw or sent. */
  textMismatch: number;
  /** The items of a conversation are not in the order its client sent the turns, user before assistant. */
  orderViolations: number;
  /** `GET /v1/responses/{id}` of an acknowledged turn is not completed with the client's text. */
  responseMismatch: number;
  /** Turns the client saw fail whose answer is stored anyway (the client was told less than happened). */
  storedButFailed: number;
  /** The first few disagreements, to start an investigation from. */
  examples: string[];
}

type Item = { id: string; role?: string; content?: Array<{ text?: string }> };
type Get = (path: string) => Promise<unknown>;

const turnKey = (responseId: string) => responseId.replace(/^resp_turn_/, "");
const textOf = (item: Item | undefined) => item?.content?.[0]?.text;

/** Every item of a conversation, oldest first, page by page through the public API. */
export async function listAllItems<T extends { id: string } = Item>(
  get: Get,
  conversation: string,
): Promise<T[]> {
  const items: T[] = [];
  let after: string | null = null;
  for (;;) {
    const query: string = `order=asc&limit=100${after ? `&after=${after}` : ""}`;
    const page = (await get(`/v1/conversations/${conversation}/items?${query}`)) as {
      data: T[];
      has_more: boolean;
      last_id: string | null;
    };
    items.push(...page.data);
    if (!page.has_more || !page.last_id) return items;
    after = page.last_id;
  }
}

/**
 * Every acknowledged response against the stored items, through the public API: each has exactly one user and
 * one assistant item with the texts the client sent and saw, in the client's order, and nothing else is stored.
 */
export async function reconcileSoak(o: {
  get: Get;
  conversations: readonly string[];
  turns: readonly SoakTurn[];
  concurrency: number;
}): Promise<SoakReconciliation> {
  const r: SoakReconciliation = {
    conversations: o.conversations.length,
    acknowledged: 0,
    lost: 0,
    duplicated: 0,
    textMismatch: 0,
    orderViolations: 0,
    responseMismatch: 0,
    storedButFailed: 0,
    examples: [],
  };
  const note = (what: string) => {
    if (r.examples.length < 20) r.examples.push(what);
  };
  const byConversation = new Map<string, SoakTurn[]>();
  for (const turn of o.turns)
    byConversation.set(turn.conversation, [...(byConversation.get(turn.conversation) ?? []), turn]);

  const checkConversation = async (conversation: string) => {
    const turns = (byConversation.get(conversation) ?? []).sort((a, b) => a.index - b.index);
    const items = await listAllItems(o.get, conversation);
    const counts = new Map<string, number>();
    for (const item of items) counts.set(item.id, (counts.get(item.id) ?? 0) + 1);
    for (const [id, n] of counts)
      if (n > 1) {
        r.duplicated += n - 1;
        note(`${conversation}: item ${id} listed ${n} times`);
      }
    const byId = new Map(items.map((item) => [item.id, item]));
    const expectedOrder: string[] = [];
    const known = new Set<string>();
    for (const turn of turns) {
      const acknowledged = turn.outcome === "completed" || turn.outcome === "incomplete";
      if (acknowledged) r.acknowledged += 1;
      if (!turn.responseId) {
        if (acknowledged) {
          r.lost += 1;
          note(`${conversation} #${turn.index}: acknowledged without a response id`);
        }
        continue;
      }
      const user = `msg_${turnKey(turn.responseId)}u`;
      const assistant = `msg_${turnKey(turn.responseId)}a`;
      known.add(user).add(assistant);
      if (byId.has(user)) expectedOrder.push(user);
      if (byId.has(assistant)) expectedOrder.push(assistant);
      if (!acknowledged) {
        if (byId.has(assistant)) {
          r.storedButFailed += 1;
          note(`${turn.responseId}: client saw ${turn.errorKind ?? turn.outcome}, store has its answer`);
        }
        continue;
      }
      if (!byId.has(user) || !byId.has(assistant)) {
        r.lost += 1;
        note(
          `${turn.responseId}: acknowledged, stored items ${byId.has(user) ? "" : "no user "}${byId.has(assistant) ? "" : "no assistant"}`,
        );
        continue;
      }
      if (textOf(byId.get(assistant)) !== turn.text || textOf(byId.get(user)) !== turn.input) {
        r.textMismatch += 1;
        note(
          `${turn.responseId}: stored ${JSON.stringify(textOf(byId.get(assistant)))}, client saw ${JSON.stringify(turn.text)}`,
        );
      }
    }
    for (const item of byId.values())
      if (!known.has(item.id)) {
        r.duplicated += 1;
        note(`${conversation}: item ${item.id} (${item.role ?? "?"}) belongs to no client turn`);
      }
    // An id listed twice is counted above, as a duplicate; the order check reads each id once.
    const listedOrder = [...counts.keys()].filter((id) => known.has(id));
    if (listedOrder.join() !== expectedOrder.join()) {
      r.orderViolations += 1;
      note(`${conversation}: items ${listedOrder.join(",")} against sent ${expectedOrder.join(",")}`);
    }
    for (const turn of turns) {
      if (!turn.responseId || (turn.outcome !== "completed" && turn.outcome !== "incomplete")) continue;
      const stored = (await o.get(`/v1/responses/${turn.responseId}`)) as {
        status?: string;
        output?: Array<{ content?: Array<{ text?: string }> }>;
      };
      if (stored.status !== turn.outcome || stored.output?.[0]?.content?.[0]?.text !== turn.text) {
        r.responseMismatch += 1;
        note(`${turn.responseId}: GET says ${stored.status ?? "?"}, client saw ${turn.outcome}`);
      }
    }
  };

  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.conversations.length) await checkConversation(o.conversations[next++] as string);
    }),
  );
  return r;
}
