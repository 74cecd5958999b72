import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_ROUTE_MAX_TOKENS } from "../../schema/harness/harness-settings.ts";
import { BadRequestError, SPECIALIST_LABELS, buildGenerateSubject } from "../../schema/wire/v2/index.ts";
import { requestRoute, routeRequest, type RouteInput } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({ natsUrl: nats.url, models: inject("models") });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const routeInput = (prompt: string, i: number): RouteInput => ({
  requestId: `route-${i}`,
  slotKey: `conv-${i % 7}`,
  prompt,
  timeoutMs: 20_000,
});

describe("route-shaped generate requests (a choice over labels)", () => {
  it("returns one of the labels within the token budget for 200 varied views", async () => {
    const views = fc.sample(
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 300 }),
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 120 }),
        fc
          .array(fc.constantFrom("write", "code", "plan", "a", "UI", "hello", "agent", "chat", "?", "\n"), {
            minLength: 1,
            maxLength: 60,
          })
          .map((words) => words.join(" ")),
      ),
      { numRuns: 200, seed: 42 },
    );
    const seen = new Set<string>();
    for (const [i, body] of views.entries()) {
      const result = await requestRoute(t.client, routeInput(`<route>\nuser: ${body}\nlabel: `, i));
      expect(SPECIALIST_LABELS).toContain(result.label);
      expect(result.usage.completionTokens).toBeGreaterThan(0);
      expect(result.usage.completionTokens).toBeLessThanOrEqual(DEFAULT_ROUTE_MAX_TOKENS);
      expect(result.nodeId).toBe("test-node");
      // The most probable of four labels: at least a quarter of the mass, at most all of it.
      expect(result.confidence).toBeGreaterThanOrEqual(1 / SPECIALIST_LABELS.length - 1e-6);
      expect(result.confidence).toBeLessThanOrEqual(1);
      seen.add(result.label);
    }
    // Random weights still spread over labels; a grammar bug that pins one label would show here.
    expect(seen.size).toBeGreaterThan(1);
  });

  it("honours a custom label set and a bounded reasoning prefix", async () => {
    for (let i = 0; i < 20; i++) {
      const result = await requestRoute(t.client, {
        ...routeInput(`<route>\nuser: request number ${i}\n`, 1000 + i),
        choices: ["yes", "no"],
        maxTokens: 12,
        reasoningMaxTokens: 8,
      });
      expect(["yes", "no"]).toContain(result.label);
      expect(result.confidence).toBeGreaterThanOrEqual(0.5 - 1e-6);
      expect(result.usage.completionTokens).toBeLessThanOrEqual(12);
      expect(result.rawText.endsWith(result.label)).toBe(true);
    }
  });

  it("rejects a budget that cannot fit the longest label before sending anything", async () => {
    await expect(requestRoute(t.client, { ...routeInput("x", 1), maxTokens: 3 })).rejects.toThrow(
      /longest choice/,
    );
  });

  it("rejects a budget that cannot fit the longest label when a peer sends it anyway", async () => {
    const request = routeRequest({ ...routeInput("x", 2), choices: ["coding"] });
    const raw = JSON.stringify({ ...request, sampling: { ...request.sampling, maxTokens: 3 } });
    const reply = await t.client.request(buildGenerateSubject(), new TextEncoder().encode(raw), {
      timeout: 5000,
    });
    const body = JSON.parse(new TextDecoder().decode(reply.data)) as {
      type: string;
      error: { code: string };
    };
    expect(body.type).toBe("error");
    expect(body.error.code).toBe(new BadRequestError("x").code);
  });
});
