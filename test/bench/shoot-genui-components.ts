/** Chromium's side of the genui bench: a component's render link opened and shot, the shots composed into a grid. */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import type { Outcome } from "./render-genui-report.ts";

/** One screenshot per rendered component, only for composing the grids (which are what the report keeps). */
export const SHOT_DIR = join(tmpdir(), "molmesh-bench-genui-shots");
const GRID_COLUMNS = 4;

/** Opens the render link; renders = the frame initialized, reported no error and shows non-empty content. */
export async function renderComponent(
  browser: Browser,
  url: string,
  shot: string,
): Promise<{ ok: boolean; error?: string }> {
  const page = await browser.newPage({ viewport: { width: 360, height: 300 } });
  try {
    await page.goto(url);
    const state = await page
      .waitForFunction(
        () => {
          const s = (window as unknown as { __genui?: { state: string; errors: string[] } }).__genui;
          return s && ["ready", "error", "killed"].includes(s.state) ? s : false;
        },
        null,
        { timeout: 10_000 },
      )
      .then((handle) => handle.jsonValue() as Promise<{ state: string; errors: string[] }>);
    await page.waitForTimeout(400);
    const frame = page.frames().find((f) => f.url().includes("/genui/frame/"));
    const text = (await frame?.evaluate(() => document.getElementById("root")?.innerHTML.length ?? 0)) ?? 0;
    const after = await page.evaluate(
      () => (window as unknown as { __genui: { state: string; errors: string[] } }).__genui,
    );
    await page.screenshot({ path: shot });
    if (state.state !== "ready" || after.errors.length > 0)
      return { ok: false, error: after.errors[0] ?? after.state };
    return text > 0 ? { ok: true } : { ok: false, error: "rendered nothing" };
  } catch (error) {
    return { ok: false, error: String(error).slice(0, 200) };
  } finally {
    await page.close();
  }
}

/**
 * One PNG of every rendered component of a variant: a page of <img> tiles (the shots as data: URLs, each under
 * its prompt) and one screenshot of it, in the same Chromium; no image library needed.
 */
export async function composeGrid(browser: Browser, outcomes: Outcome[], path: string): Promise<boolean> {
  const shots = outcomes.filter((o) => o.shot);
  if (shots.length === 0) return false;
  const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const tiles = shots.map((o) => {
    const data = readFileSync(join(SHOT_DIR, o.shot ?? "")).toString("base64");
    return `<figure><img src="data:image/png;base64,${data}"><figcaption>${escape(o.prompt)}</figcaption></figure>`;
  });
  const page = await browser.newPage({ viewport: { width: GRID_COLUMNS * 250, height: 200 } });
  try {
    await page.setContent(
      `<style>body{margin:0;font:12px system-ui;background:#fff}main{display:grid;grid-template-columns:repeat(${GRID_COLUMNS},250px)}` +
        "figure{margin:0;padding:4px;border:1px solid #ddd}img{width:240px;height:200px;object-fit:cover;object-position:top left;display:block}" +
        `figcaption{height:30px;overflow:hidden}</style><main>${tiles.join("")}</main>`,
    );
    await page.waitForFunction(() => [...document.images].every((i) => i.complete));
    await page.screenshot({ path, fullPage: true });
    return true;
  } finally {
    await page.close();
  }
}
