import OpenAI from "openai";

/** The official client, answered by one prepared SSE body: what a real client parses is what we assert on. */
export function createClientFor(stream: ReadableStream<Uint8Array>): OpenAI {
  return new OpenAI({
    apiKey: "x",
    baseURL: "http://test/v1",
    maxRetries: 0,
    fetch: () => Promise.resolve(new Response(stream, { headers: { "content-type": "text/event-stream" } })),
  });
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Reads `mol` off an object the client typed without it. */
export function readMol(value: object): unknown {
  return "mol" in value ? value.mol : undefined;
}
