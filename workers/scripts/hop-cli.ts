/**
 * `npm run hop -- route "<text>"` | `npm run hop -- answer <adapter> "<text>"` | `npm run hop -- summary <adapter> "<text>"`:
 * sends one hop to the local mesh over NATS, as the edge would, and prints the reply with its accounting.
 */
import { randomUUID } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { WIRE_VERSION } from "../../schema/wire/v2/index.ts";
import { requestRoute, requestSummary } from "../src/nats/hop-client.ts";
import { streamAnswer } from "../src/nats/answer-stream.ts";

const [hop, ...rest] = process.argv.slice(2);
const usage = 'usage: npm run hop -- route "<text>" | answer <adapter> "<text>" | summary <adapter> "<text>"';
const nc = await connect({ servers: process.env.MOL_NATS_URL ?? "nats://127.0.0.1:4222" });
const base = { version: WIRE_VERSION, requestId: randomUUID(), conversationId: "cli", timeoutMs: 60_000 };
try {
  if (hop === "route" && rest[0]) {
    const result = await requestRoute(nc, {
      ...base,
      type: "route",
      view: `user: ${rest.join(" ")}\nlabel: `,
    });
    console.log(JSON.stringify(result, null, 2));
  } else if (hop === "answer" && rest[0] && rest[1]) {
    const view = `user: ${rest.slice(1).join(" ")}\nassistant:`;
    for await (const part of streamAnswer(nc, { ...base, type: "answer", adapter: rest[0], view })) {
      if (part.type === "text-delta") process.stdout.write(part.delta);
      if (part.type === "finish")
        console.log(`\n\n${JSON.stringify({ usage: part.usage, timings: part.timings })}`);
    }
  } else if (hop === "summary" && rest[0] && rest[1]) {
    const view = `${rest.slice(1).join(" ")}\nsummary:`;
    console.log(
      JSON.stringify(await requestSummary(nc, { ...base, type: "summary", adapter: rest[0], view }), null, 2),
    );
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
