import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;

beforeAll(async () => {
  mesh = await startTestMesh();
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

async function createConversation(): Promise<string> {
  const response = await mesh.api("/v1/conversations", { method: "POST", json: {} });
  return ((await response.json()) as { id: string }).id;
}

type Item = { id: string; role: string; content: Array<{ text: string }> };

async function items(conversationId: string): Promise<Item[]> {
  const response = await mesh.api(`/v1/conversations/${conversationId}/items?order=asc&limit=100`);
  return ((await response.json()) as { data: Item[] }).data;
}

describe("one conversation, many requests", () => {
  it("serializes concurrent turns: no interleaved or lost events", async () => {
    const id = await createConversation();
    const inputs = ["alpha", "bravo", "charlie", "delta"];
    const responses = await Promise.all(
      inputs.map((input) =>
        mesh.api("/v1/responses", {
          method: "POST",
          json: { conversation: id, input, max_output_tokens: 8 },
        }),
      ),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<{
      id: string;
      output: Array<{ id: string }>;
    }>;
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const timeline = await items(id);
    expect(timeline).toHaveLength(8);
    // Pairs: each user message is followed by its own answer.
    for (let i = 0; i < timeline.length; i += 2) {
      expect(timeline[i]?.role).toBe("user");
      expect(timeline[i + 1]?.role).toBe("assistant");
      expect(timeline[i + 1]?.id.slice(0, -1)).toBe(timeline[i]?.id.slice(0, -1));
    }
    expect(
      timeline
        .filter((i) => i.role === "user")
        .map((i) => i.content[0]?.text)
        .sort(),
    ).toEqual(inputs);
    expect(new Set(bodies.map((b) => b.output[0]?.id)).size).toBe(4);
  });

  it("a client that disconnects mid-answer cancels the answer hop; the next turn works", async () => {
    const id = await createConversation();
    const controller = new AbortController();
    const response = await mesh.api("/v1/responses", {
      method: "POST",
      json: { conversation: id, input: "a long story please", stream: true, max_output_tokens: 3000 },
      signal: controller.signal,
    });
    if (!response.body) throw new Error("no body");
    const reader = response.body.getReader();
    let seen = "";
    while (!seen.includes("response.output_text.delta")) {
      const { value } = await reader.read();
      seen += new TextDecoder().decode(value);
    }
    controller.abort();
    const node = mesh.node;
    if (!node) throw new Error("this mesh has a GPU node");
    await expect
      .poll(() => node.logs.some((l) => l.message === "hop cancelled by requester"), { timeout: 10_000 })
      .toBe(true);
    await expect
      .poll(() => node.engine.snapshot().every((s) => s.freeSlots === s.totalSlots), { timeout: 5_000 })
      .toBe(true);

    const next = await mesh.api("/v1/responses", {
      method: "POST",
      json: { conversation: id, input: "short now", max_output_tokens: 8 },
    });
    expect(next.status).toBe(200);
    const timeline = await items(id);
    // The cancelled turn keeps its user message and has no answer; the next turn is whole.
    expect(timeline.map((i) => i.role)).toEqual(["user", "user", "assistant"]);
  });

  it("deleting a conversation removes it", async () => {
    const id = await createConversation();
    await mesh.api("/v1/responses", {
      method: "POST",
      json: { conversation: id, input: "hi", max_output_tokens: 4 },
    });
    const deleted = await mesh.api(`/v1/conversations/${id}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ id, object: "conversation.deleted", deleted: true });
    expect((await mesh.api(`/v1/conversations/${id}`)).status).toBe(404);
    expect((await mesh.api(`/v1/conversations/${id}/items`)).status).toBe(404);
  });
});

describe("the tenant's conversation list", () => {
  it("lists conversations newest first, pages with `after`, and drops deleted ones", async () => {
    const ids: string[] = [];
    // created_at has second resolution: a pause before each, so none shares its second with another (an earlier
    // test's conversation made in ids[0]'s second sorted between the pages once).
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1100));
      ids.push(await createConversation());
    }
    type Page = { data: Array<{ id: string; object: string }>; has_more: boolean; last_id: string | null };
    const page = (query: string) =>
      mesh.api(`/v1/conversations?${query}`).then((r) => r.json() as Promise<Page>);
    const first = await page("limit=2");
    expect(first.data.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.data[0]?.object).toBe("conversation");
    expect(first.has_more).toBe(true);
    const second = await page(`limit=2&after=${first.last_id}`);
    expect(second.data[0]?.id).toBe(ids[0]);
    await mesh.api(`/v1/conversations/${ids[1]}`, { method: "DELETE" });
    expect((await page("limit=100")).data.map((c) => c.id)).not.toContain(ids[1]);
    expect((await mesh.api("/v1/conversations?after=conv_unknown")).status).toBe(404);
  });
});
