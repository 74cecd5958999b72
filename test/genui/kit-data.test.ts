import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeProcess } from "../../infra/local/spawn-edge.ts";
import { spawnEdgeOnFreePorts } from "../harness/spawn-edge-on-free-ports.ts";

/**
 * Issue 17 in the real frame: the Worker in workerd serves the committed bundle and Debian's Chromium runs it, so
 * data the component hands the kit (Chart points, Select options as objects) crosses the SES membrane for real.
 */

const KEY = "sk-dev-genui-kit-data";
const CHROMIUM = process.env.MOL_CHROMIUM_PATH ?? "/usr/bin/chromium";
const COMPONENT = `import { useState } from "react";
import { Card, Chart, Select, Text } from "@molmesh/ui";
const cities = [{ label: "Paris", value: "paris" }, { label: "Lyon", value: "lyon" }];
const highs = { paris: [21, 24, 19], lyon: [25, 27, 23] };
export default function Forecast() {
  const [city, setCity] = useState("paris");
  const data = ["Mon", "Tue", "Wed"].map((label, i) => ({ label, value: highs[city][i] }));
  return (
    <Card title="Highs">
      <Select label="City" value={city} options={cities} onChange={setCity} />
      <Text>Showing {city}: {data.map((d) => d.value).join(", ")}</Text>
      <Chart data={data} height={100} />
    </Card>
  );
}`;

let edge: EdgeProcess;
let persistDir: string;
let browser: Browser;

beforeAll(async () => {
  persistDir = mkdtempSync(join(tmpdir(), "molmesh-genui-kit-"));
  edge = await spawnEdgeOnFreePorts({ natsWsUrl: "ws://127.0.0.1:9", devApiKey: KEY, persistDir });
  browser = await chromium.launch({ executablePath: CHROMIUM });
});

afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await browser?.close();
  await edge?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  if (persistDir) rmSync(persistDir, { recursive: true, force: true });
});

it("renders a Chart and a Select whose options are objects, and the select drives the chart", async () => {
  const response = await fetch(`${edge.url}/v1/genui/components`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "text/jsx" },
    body: COMPONENT,
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const { render_url } = JSON.parse(text) as { render_url: string };
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(render_url);
    await page.waitForFunction(() =>
      ["ready", "error"].includes((window as unknown as { __genui: { state: string } }).__genui.state),
    );
    const frame = page.frameLocator("iframe");
    const body = frame.locator("body");
    await expect.poll(() => body.innerText()).toContain("Showing paris: 21, 24, 19");
    expect(await frame.locator("option").allInnerTexts()).toEqual(["Paris", "Lyon"]);
    expect(
      await frame.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(["paris", "lyon"]);
    const bars = frame.locator("svg rect");
    expect(await bars.count()).toBe(3);
    expect(await frame.locator("svg text").allTextContents()).toEqual(["Mon", "Tue", "Wed"]);
    const heights = async () => bars.evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
    // The tallest bar is the scale: Tue at 24 of 24.
    expect(await heights()).toEqual([87.5, 100, (19 / 24) * 100]);

    await frame.locator("select").selectOption("lyon");
    await expect.poll(() => body.innerText()).toContain("Showing lyon: 25, 27, 23");
    expect(await frame.locator("select").inputValue()).toBe("lyon");
    expect(await heights()).toEqual([(25 / 27) * 100, 100, (23 / 27) * 100]);
    const state = await page.evaluate(
      () => (window as unknown as { __genui: { state: string; errors: string[] } }).__genui,
    );
    expect(state).toMatchObject({ state: "ready", errors: [] });
  } finally {
    await context.close();
  }
}, 90_000);
