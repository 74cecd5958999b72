/**
 * `npm run hop -- route "<text>"` | `npm run hop -- answer <adapter> "<text>"` | `npm run hop -- summary <adapter> "<text>"`:
 * sends one `generate` request to the local mesh over NATS, shaped as the edge's route, answer or summary, and prints
 * the reply with its accounting.
 */
import { randomUUID } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { ROUTER_ADAPTER, SPECIALIST_LABELS, WIRE_VERSION } from "../../schema/wire/v2/index.ts";
import { requestGenerate } from "../src/nats/generate-client.ts";
import { streamGenerate } from "../src/nats/stream-generate.ts";

const [hop, ...rest] = process.argv.slice(2);
const usage = 'usage: npm run hop -- route "<text>" | answer <adapter> "<text>" | summary <adapter> "<text>"';
const nc = await connect({ servers: process.env.MOL_NATS_URL ?? "nats://127.0.0.1:4222" });
const base = {
  version: WIRE_VERSION,
  type: "generate",
  requestId: randomUUID(),
  slotKey: "cli",
  timeoutMs: 60_000,
} as const;
try {
  if (hop === "route" && rest[0]) {
    const result = await requestGenerate(nc, {
      ...base,
      adapter: ROUTER_ADAPTER,
      priority: "route",
      prompt: `user: ${rest.join(" ")}\nlabel: `,
      constraint: { type: "choice", choices: [...SPECIALIST_LABELS] },
      sampling: { maxTokens: 24, temperature: 0 },
      return: { choiceProbabilities: true },
    });
    console.log(JSON.stringify(result, null, 2));
  } else if (hop === "answer" && rest[0] && rest[1]) {
    const prompt = `user: ${rest.slice(1).join(" ")}\nassistant:`;
    for await (const part of streamGenerate(nc, { ...base, adapter: rest[0], priority: "answer", prompt })) {
      if (part.type === "text-delta") process.stdout.write(part.delta);
      if (part.type === "finish")
        console.log(`\n\n${JSON.stringify({ usage: part.usage, timings: part.timings })}`);
    }
  } else if (hop === "summary" && rest[0] && rest[1]) {
    const prompt = `${rest.slice(1).join(" ")}\nsummary:`;
    const result = await requestGenerate(nc, {
      ...base,
      adapter: rest[0],
      priority: "summary",
      prompt,
      sampling: { maxTokens: 192, temperature: 0 },
    });
    console.log(JSON.stringify(result, null, 2));
  } else {
    console.error(usage);
    process.exitCode = 2;
  }
} catch (error) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  process.exitCode = 1;
} finally {
  await nc.close();
}
