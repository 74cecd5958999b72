import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../gpu-nodes/src/engine/engine.ts";
import { parseAdapterName } from "../../schema/wire/v2/adapter-name.ts";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * The playground end to end in Debian's Chromium: the real edge (workerd), NATS and a GPU node on the tiny
 * model. One marker makes the node route to genui and answer with a fixed component (the tiny model's weights
 * are random, it would never write one); everything after the engine (validation, storage, the render link,
 * the sandbox frame) is the real path. Screenshots go to MOL_SCREENSHOT_DIR when set.
 */

const CHROMIUM = process.env.MOL_CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = process.env.MOL_SCREENSHOT_DIR;
const UI_MARKER = "[ui-test]";
const COMPONENT = `import { useState } from "react";
import { Card, Text, Button, Table, Row, Badge } from "@molmesh/ui";

export default function Forecast() {
  const [unit, setUnit] = useState("C");
  const days = [["Mon", 21], ["Tue", 24], ["Wed", 19]];
  return (
    <Card title="Paris, next three days">
      <Row><Badge>{unit}</Badge><Button onClick={() => setUnit(unit === "C" ? "F" : "C")}>Switch unit</Button></Row>
      <Table columns={["Day", "High"]} rows={days.map(([d, t]) => [d, unit === "C" ? t : Math.round(t * 1.8 + 32)])} />
      <Button message="Show me Lyon too">Lyon</Button>
    </Card>
  );
}`;

function scriptGenui(engine: Engine): Engine {
  return {
    ...engine,
    generate: async (request) => {
      if (!request.prompt.includes(UI_MARKER)) return engine.generate(request);
      const finish = { finishReason: "stop" as const, queueMs: 0, prefillMs: 1, decodeMs: 1 };
      const usage = {
        promptTokens: 10,
        cachedPromptTokens: 0,
        evaluatedPromptTokens: 10,
        completionTokens: 5,
      };
      if (request.constraint) return { ...finish, text: "genui", usage };
      // The engine is asked for a revision (`genui@<rev>`): its label is what the scripted answer keys on.
      if (
        parseAdapterName(request.adapter).label !== "genui" ||
        /Summarise your last answer/.test(request.prompt)
      )
        return engine.generate(request);
      for (const line of COMPONENT.split(/(?<=\n)/)) request.onTextDelta?.(line);
      return { ...finish, text: COMPONENT, usage };
    },
  };
}

let mesh: TestMesh;
let browser: Browser;

beforeAll(async () => {
  mesh = await startTestMesh({ wrapEngine: scriptGenui });
  browser = await chromium.launch({ executablePath: CHROMIUM });
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
}, 180_000);
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await browser?.close();
  await mesh?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

async function openSignedIn(width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 844 } });
  const response = await page.goto(`${mesh.edge.url}/playground`);
  expect(response?.status()).toBe(200);
  await page.fill("#key", TEST_API_KEY);
  await page.click("#signin");
  await page.waitForSelector("#chat:not([hidden])");
  return page;
}

/**
 * The whole page in one screenshot. Not `fullPage`: Chromium does not paint a cross-origin frame that is outside
 * the viewport (offscreen-frame throttling), so a component below the fold came out blank. The viewport grows to
 * the page instead, and the shot waits until every frame has painted a frame at that size.
 */
async function screenshotWhole(page: Page, path: string) {
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const { width } = page.viewportSize() ?? { width: 390 };
  await page.setViewportSize({ width, height });
  const painted = () =>
    new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
  for (const frame of page.frames()) await frame.evaluate(painted);
  await page.screenshot({ path });
}

async function sendAndWait(page: Page, text: string, turns: number) {
  await page.fill("#input", text);
  await page.click("#send");
  await page.waitForFunction((n) => document.querySelectorAll(".turn").length >= n, turns);
  await page.waitForFunction(() => !(document.getElementById("send") as HTMLButtonElement).disabled, null, {
    timeout: 60_000,
  });
  return page.locator(".turn").nth(turns - 1);
}

describe("GET /playground", () => {
  it("is one self-contained page under a nonce CSP, with no key anywhere but memory", async () => {
    const response = await fetch(`${mesh.edge.url}/playground`);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/script-src 'nonce-[0-9a-f]{32}'/);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const body = await response.text();
    expect(body).not.toMatch(/<script[^>]+src=|<link |localStorage|sessionStorage|document\.cookie/);

    const page = await openSignedIn(1024);
    const stored = await page.evaluate(() => ({
      local: localStorage.length,
      session: sessionStorage.length,
      cookie: document.cookie,
      url: location.href,
      field: (document.getElementById("key") as HTMLInputElement).value,
    }));
    expect(stored).toEqual({
      local: 0,
      session: 0,
      cookie: "",
      url: `${mesh.edge.url}/playground`,
      field: "",
    });
    await page.close();
  });

  it("streams an answer with its route, timings, cached tokens, harness and summary, and fits 390 px", async () => {
    const page = await openSignedIn(390);
    const deltas: number[] = [];
    await page.exposeFunction("__delta", (n: number) => deltas.push(n));
    await page.evaluate(() => {
      new MutationObserver(() => {
        const answer = document.querySelector(".turn:last-child .answer");
        (window as unknown as { __delta: (n: number) => void }).__delta(answer?.textContent.length ?? 0);
      }).observe(document.getElementById("turns") as HTMLElement, {
        subtree: true,
        childList: true,
        characterData: true,
      });
    });
    const turn = await sendAndWait(page, "Hello, who are you? Tell me a long story.", 1);
    const label = await turn.getAttribute("data-label");
    expect(["chat", "agent", "coding", "genui"]).toContain(label);
    expect(await turn.locator('[data-fact="route"] b').textContent()).toBe(label);
    expect(await turn.locator('[data-fact="confidence"] b').textContent()).toMatch(/^(—|[01]\.\d\d)$/);
    expect(await turn.locator('[data-fact="answer"] b').textContent()).toMatch(/^\d+ ms$/);
    expect(await turn.locator('[data-fact="cached tokens"] b').textContent()).toMatch(/^\d+ \/ \d+$/);
    expect(await turn.locator('[data-fact="harness"] b').textContent()).toMatch(/^[0-9a-f]{12}$/);
    expect((await turn.locator(".answer").textContent())?.length).toBeGreaterThan(0);
    // Streamed: the answer text grew over several DOM updates, not in one piece at the end.
    expect(new Set(deltas.filter((n) => n > 0)).size).toBeGreaterThan(1);
    await expect
      .poll(() => turn.locator(".summary").textContent(), { timeout: 30_000 })
      .not.toMatch(/pending/);
    const fit = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      inner: window.innerWidth,
    }));
    expect(fit.scroll).toBeLessThanOrEqual(fit.inner);
    if (SHOTS) await screenshotWhole(page, join(SHOTS, "playground-390.png"));
    await page.close();
  }, 120_000);

  it("renders a genui answer inline in a sandboxed frame, and its ui/message becomes the next turn", async () => {
    const page = await openSignedIn(390);
    const turn = await sendAndWait(page, `${UI_MARKER} a three-day forecast for Paris`, 1);
    expect(await turn.getAttribute("data-label")).toBe("genui");
    expect(await turn.locator(".genui").getAttribute("data-status")).toBe("valid");
    expect(await turn.locator(".genui iframe").getAttribute("sandbox")).toBe(
      "allow-scripts allow-same-origin",
    );
    // The host page (API origin, sandboxed) holds the component frame (sandbox origin).
    await expect
      .poll(() => page.frames().some((f) => f.url().includes("/genui/frame/")), { timeout: 15_000 })
      .toBe(true);
    const component = page.frames().find((f) => f.url().includes("/genui/frame/")) as Frame;
    // The component's own frame: the sandbox origin, scripts only (never same-origin).
    const host = page.frames().find((f) => f.url().includes("/playground/render/")) as Frame;
    expect(await host.locator("iframe").getAttribute("sandbox")).toBe("allow-scripts");
    expect(new URL(component.url()).hostname).toBe("genui-sandbox.localhost");
    await expect
      .poll(() => host.evaluate(() => (window as unknown as { __genui: { state: string } }).__genui), {
        timeout: 15_000,
      })
      .toMatchObject({ state: "ready", errors: [] });
    await component.waitForSelector("text=Paris, next three days", { timeout: 15_000 });
    // The page followed the turn down to the component: it is on screen without the reader scrolling.
    await expect
      .poll(
        async () => {
          const box = await turn.locator(".genui iframe").boundingBox();
          return box !== null && box.y >= 0 && box.y + box.height <= 844;
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    await component.click("text=Switch unit");
    await component.waitForSelector("text=70");
    const fit = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    expect(fit).toBe(true);
    if (SHOTS) await screenshotWhole(page, join(SHOTS, "playground-genui-390.png"));
    await component.click("text=Lyon");
    const next = page.locator(".turn").nth(1);
    await expect
      .poll(() => next.locator(".user").textContent(), { timeout: 15_000 })
      .toBe("Show me Lyon too");
    await page.waitForFunction(() => !(document.getElementById("send") as HTMLButtonElement).disabled, null, {
      timeout: 60_000,
    });
    await page.close();
  }, 120_000);
});
