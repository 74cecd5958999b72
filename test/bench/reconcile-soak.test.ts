import { describe, expect, it } from "vitest";
import type { SoakTurn } from "./drive-soak-turns.ts";
import { reconcileSoak } from "./reconcile-soak.ts";

type Item = { id: string; role: string; content: Array<{ text: string }> };

const user = (key: string, text: string): Item => ({ id: `msg_${key}u`, role: "user", content: [{ text }] });
const answer = (key: string, text: string): Item => ({
  id: `msg_${key}a`,
  role: "assistant",
  content: [{ text }],
});

function acked(index: number, key: string, text: string): SoakTurn {
  return {
    conversation: "conv_1",
    index,
    input: `in ${index}`,
    responseId: `resp_turn_${key}`,
    outcome: "completed",
    text,
    attemptErrors: [],
    ms: 1,
    endedAtS: 0,
    takeovers: 0,
    anomalies: [],
  };
}

/** The public API as the reconciliation reads it: items in pages of `pageSize`, and each response. */
function fakeApi(items: Item[], responses: Record<string, { status: string; text: string }>, pageSize = 100) {
  return (path: string): Promise<unknown> => {
    const response = /^\/v1\/responses\/(.+)$/.exec(path);
    if (response) {
      const r = responses[response[1] as string];
      return Promise.resolve({ status: r?.status, output: [{ content: [{ text: r?.text }] }] });
    }
    const after = /after=([^&]+)/.exec(path)?.[1];
    const start = after ? items.findIndex((i) => i.id === after) + 1 : 0;
    const data = items.slice(start, start + pageSize);
    return Promise.resolve({
      data,
      has_more: start + pageSize < items.length,
      last_id: data.at(-1)?.id ?? null,
    });
  };
}

const reconcile = (turns: SoakTurn[], items: Item[], responses = {}, pageSize = 100) =>
  reconcileSoak({
    get: fakeApi(items, responses, pageSize),
    conversations: ["conv_1"],
    turns,
    concurrency: 2,
  });

const turns = [acked(0, "a1", "one"), acked(1, "b2", "two")];
const stored = [user("a1", "in 0"), answer("a1", "one"), user("b2", "in 1"), answer("b2", "two")];
const responses = {
  resp_turn_a1: { status: "completed", text: "one" },
  resp_turn_b2: { status: "completed", text: "two" },
};
const ZERO = {
  lost: 0,
  duplicated: 0,
  textMismatch: 0,
  orderViolations: 0,
  responseMismatch: 0,
  storedButFailed: 0,
};

describe("the soak's reconciliation of acknowledged responses against the stored items", () => {
  it("finds nothing wrong when the store holds exactly what the clients saw, across item pages", async () => {
    expect(await reconcile(turns, stored, responses, 3)).toMatchObject({ acknowledged: 2, ...ZERO });
  });

  it("counts an acknowledged answer that is not stored as lost", async () => {
    const r = await reconcile(turns, stored.slice(0, 3), responses);
    expect(r).toMatchObject({ ...ZERO, lost: 1 });
    expect(r.examples[0]).toContain("resp_turn_b2");
  });

  it("counts an item listed twice and an item no client turn made as duplicated", async () => {
    const extra = [...stored, answer("b2", "two"), answer("zz", "ghost")];
    expect(await reconcile(turns, extra, responses)).toMatchObject({ ...ZERO, duplicated: 2 });
  });

  it("counts a stored text other than the client's, and a response object that differs", async () => {
    const changed = [...stored.slice(0, 3), answer("b2", "tw")];
    const r = await reconcile(turns, changed, { ...responses, resp_turn_b2: { status: "failed", text: "" } });
    expect(r).toMatchObject({ ...ZERO, textMismatch: 1, responseMismatch: 1 });
  });

  it("counts a conversation whose items are not in the order its client sent the turns", async () => {
    const swapped = [stored[2], stored[3], stored[0], stored[1]] as Item[];
    expect(await reconcile(turns, swapped, responses)).toMatchObject({ ...ZERO, orderViolations: 1 });
  });

  it("counts a turn the client saw fail whose answer is stored anyway", async () => {
    const failed: SoakTurn = { ...acked(1, "b2", "two"), outcome: "failed", errorKind: "failed_x" };
    delete failed.text;
    const r = await reconcile([acked(0, "a1", "one"), failed], stored, responses);
    expect(r).toMatchObject({ ...ZERO, acknowledged: 1, storedButFailed: 1 });
  });
});
