import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeProcess } from "../../infra/local/spawn-edge.ts";
import { queryLocalD1 } from "../harness/query-local-d1.ts";
import { spawnEdgeOnFreePorts } from "../harness/spawn-edge-on-free-ports.ts";

/**
 * GenUI end to end: the real Worker in workerd (wrangler dev) validates and stores components; Debian's Chromium
 * (no browser download) opens their capability URLs. A loopback server counts every request that reaches it: a
 * contained component leaves it at zero, the host page keeps its URL, opens no popup and keeps answering.
 */

const KEY = "sk-dev-genui-test";
const CHROMIUM = process.env.MOL_CHROMIUM_PATH ?? "/usr/bin/chromium";

let edge: EdgeProcess;
let persistDir: string;
let browser: Browser;
let trap: Server;
let trapPort = 0;
const trapHits: string[] = [];

type Report = { status: string; findings: { rule: string; line: number; column: number; message: string }[] };
type Created = {
  id: string;
  status: "valid";
  report: Report;
  render_url: string;
  render_url_expires_at: number;
};
type Rejected = { error: { code: string; type: string; param: string }; status: "rejected"; report: Report };

async function post(body: BodyInit, contentType = "application/json", key = KEY): Promise<Response> {
  return fetch(`${edge.url}/v1/genui/components`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": contentType },
    body,
  });
}
const postSource = (source: string) => post(JSON.stringify({ source }));

async function create(source: string): Promise<Created> {
  const response = await postSource(source);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Created;
}

/** A request to the Worker under another Host (Node's fetch will not set Host; Chromium resolves *.localhost). */
function requestWithHost(
  host: string,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  const port = Number(new URL(edge.url).port);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}
const sandboxHost = () => `genui-sandbox.localhost:${new URL(edge.url).port}`;

interface HostState {
  state: string;
  messages: string[];
  errors: string[];
  killedAfterMs: number | null;
}
const hostState = (page: Page) => page.evaluate(() => (window as unknown as { __genui: HostState }).__genui);

beforeAll(async () => {
  trap = createServer((req, res) => {
    trapHits.push(`${req.method} ${req.url}`);
    res.end("trap");
  });
  await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
  const address = trap.address();
  trapPort = typeof address === "object" && address ? address.port : 0;
  persistDir = mkdtempSync(join(tmpdir(), "molmesh-genui-"));
  edge = await spawnEdgeOnFreePorts({ natsWsUrl: "ws://127.0.0.1:9", devApiKey: KEY, persistDir });
  browser = await chromium.launch({ executablePath: CHROMIUM });
});

afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await browser?.close();
  await edge?.stop();
  await new Promise((resolve) => trap?.close(resolve));
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  if (persistDir) rmSync(persistDir, { recursive: true, force: true });
});

describe("POST /v1/genui/components", () => {
  it("needs an API key", async () => {
    const response = await post(
      JSON.stringify({ source: "export default () => null" }),
      "application/json",
      "sk-wrong",
    );
    expect(response.status).toBe(401);
  });

  it("stores a valid component and answers with a capability URL on the API origin", async () => {
    const created = await create(`export default function Hello() { return <p>hello</p>; }`);
    expect(created).toMatchObject({ status: "valid", report: { status: "valid", findings: [] } });
    const url = new URL(created.render_url);
    expect(url.origin).toBe(edge.url);
    expect(url.pathname).toBe(`/playground/render/${created.id}`);
    expect(url.searchParams.get("t")).toMatch(/^[0-9a-f]{32}$/);
    expect(created.render_url_expires_at - Date.now() / 1000).toBeGreaterThan(3000);
    const got = await fetch(`${edge.url}/v1/genui/components/${created.id}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(got.status).toBe(200);
    const rows = await queryLocalD1(
      persistDir,
      `SELECT render_token_hash FROM genui_components WHERE id = '${created.id}'`,
    );
    // The token is stored only as its hash.
    expect(rows).toEqual([
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types its asymmetric matchers as any
      { render_token_hash: expect.not.stringContaining(url.searchParams.get("t") ?? "") },
    ]);
  });

  it("rejects bad input with 422 and the report, storing nothing", async () => {
    const before = await queryLocalD1(persistDir, "SELECT count(*) AS n FROM genui_components");
    const cases: Array<[Response, string]> = [
      [await postSource(`export default () => { fetch("/x"); return null; }`), "forbidden-global"],
      [await postSource(`export default () => { while (true) {} }`), "unbounded-loop"],
      [
        await postSource(`export default function C() { return <div>${"x".repeat(70_000)}</div>; }`),
        "source-too-large",
      ],
      [await post(new Uint8Array([0x65, 0x78, 0xff, 0xfe]), "text/jsx"), "source-not-utf8"],
      [await post(`export default () => <p>${"€".repeat(22_000)}</p>;`, "text/jsx"), "source-too-large"],
      [
        await post(new Uint8Array([0x7b, 0x22, 0x73, 0xff, 0x22, 0x7d]), "application/json"),
        "source-not-utf8",
      ],
      [await postSource(`export default 42;`), "default-export-not-function"],
      [await postSource(`export default () => <div>`), "syntax-error"],
    ];
    for (const [response, rule] of cases) {
      const body = (await response.json()) as Rejected;
      expect(response.status, rule).toBe(422);
      expect(body.error).toMatchObject({
        code: "genui_component_rejected",
        type: "invalid_request_error",
        param: "source",
      });
      expect(body.status).toBe("rejected");
      expect(body.report.findings.map((f) => f.rule)).toContain(rule);
    }
    // Past the API's body limit the body is not even read to the end: 413, before any validation.
    const huge = await post(`export default () => <p>${"x".repeat(1024 * 1024)}</p>;`, "text/jsx");
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as Rejected).error.code).toBe("payload_too_large");
    expect(await queryLocalD1(persistDir, "SELECT count(*) AS n FROM genui_components")).toEqual(before);
  });
});

describe("origins", () => {
  it("serves nothing of /v1 on the sandbox host and no component code on the API host", async () => {
    expect((await requestWithHost(sandboxHost(), "/v1/models")).status).toBe(404);
    expect((await requestWithHost(sandboxHost(), "/playground/render/x")).status).toBe(404);
    expect((await requestWithHost(sandboxHost(), "/genui/runtime.js")).status).toBe(200);
    expect((await fetch(`${edge.url}/genui/runtime.js`)).status).toBe(404);
  });

  it("sends both documents' CSP as headers and refuses a wrong token", async () => {
    const created = await create(`export default () => <p>x</p>;`);
    const host = await fetch(created.render_url);
    expect(host.status).toBe(200);
    const hostCsp = host.headers.get("content-security-policy") ?? "";
    expect(hostCsp).toContain(`frame-src http://${sandboxHost()}`);
    expect(hostCsp).toContain("connect-src 'none'");
    const token = new URL(created.render_url).searchParams.get("t") ?? "";
    const frame = await requestWithHost(sandboxHost(), `/genui/frame/${created.id}?t=${token}`);
    expect(frame.status).toBe(200);
    const frameCsp = String(frame.headers["content-security-policy"]);
    for (const directive of [
      "default-src 'none'",
      `script-src http://${sandboxHost()} 'unsafe-eval'`,
      "connect-src 'none'",
      "img-src data: blob:",
      "form-action 'none'",
      "frame-src 'none'",
      "base-uri 'none'",
      "sandbox allow-scripts",
    ])
      expect(frameCsp).toContain(directive);
    expect((await fetch(`${edge.url}/playground/render/${created.id}?t=${"0".repeat(32)}`)).status).toBe(404);
    expect(
      (await requestWithHost(sandboxHost(), `/genui/frame/${created.id}?t=${"0".repeat(32)}`)).status,
    ).toBe(404);
  });
});

/** Opens a render URL in a fresh context; returns what the checks need. */
async function open(renderUrl: string, watchdogMs = 1500) {
  const context = await browser.newContext();
  const page = await context.newPage();
  // Registered after our own page, so any page opened later is a popup.
  const popups: string[] = [];
  context.on("page", (p) => popups.push(p.url()));
  const url = `${renderUrl}&watchdog_ms=${watchdogMs}`;
  await page.goto(url);
  return { context, page, popups, url };
}

describe("in Chromium", () => {
  it("renders a benign counter that reacts to a click inside its frame and sends ui/message", async () => {
    const created = await create(`import { useState } from "react";
import { Button, Card, Text } from "@molmesh/ui";
export default function Counter() {
  const [count, setCount] = useState(0);
  return (
    <Card title="Counter">
      <Text>Count: {count}</Text>
      <Button onClick={() => setCount(count + 1)} message="add one">Add</Button>
    </Card>
  );
}`);
    const { context, page } = await open(created.render_url);
    try {
      await page.waitForFunction(
        () => (window as unknown as { __genui: HostState }).__genui.state === "ready",
      );
      const frame = page.frameLocator("iframe");
      await expect.poll(() => frame.locator("body").innerText()).toContain("Count: 0");
      await frame.getByRole("button", { name: "Add" }).click();
      await expect.poll(() => frame.locator("body").innerText()).toContain("Count: 1");
      await expect.poll(async () => (await hostState(page)).messages).toEqual(["add one"]);
      expect(await page.locator("iframe").getAttribute("sandbox")).toBe("allow-scripts");
      // The frame's document is opaque-origin: the host cannot reach into it, nor it into the host.
      expect(await page.evaluate(() => document.querySelector("iframe")?.contentDocument ?? null)).toBeNull();
    } finally {
      await context.close();
    }
  });

  const trapUrl = (path: string) => `http://127.0.0.1:${trapPort}/${path}`;
  const reversed = (s: string) => JSON.stringify(Array.from(s).reverse().join(""));
  const name = (s: string) => `${reversed(s)}.split("").reverse().join("")`;

  /** Hostile components that the validator rejects outright. */
  const staticCases = (): Array<[string, string, string]> => [
    ["fetch by string-built name", `globalThis["fe" + "tch"]("${trapUrl("fetch")}");`, "forbidden-property"],
    [
      "Function via constructor chain",
      `(() => {}).constructor.constructor("return this")();`,
      "forbidden-property",
    ],
    ["location assignment", `location = "${trapUrl("loc")}";`, "forbidden-global"],
    ["window.top.location", `window.top.location = "${trapUrl("top")}";`, "forbidden-global"],
    ["window.open", `window.open("${trapUrl("popup")}");`, "forbidden-global"],
    ["document.cookie", `const c = document.cookie;`, "forbidden-global"],
    ["localStorage", `localStorage.setItem("k", "v");`, "forbidden-global"],
    ["navigator.serviceWorker", `navigator.serviceWorker.register("/sw.js");`, "forbidden-global"],
    ["import(url)", `import("${trapUrl("module.js")}");`, "dynamic-import"],
    ["eval", `eval("1 + 1");`, "forbidden-global"],
    ["busy loop while (true)", `while (true) {}`, "unbounded-loop"],
  ];
  const staticJsx = (): Array<[string, string, string]> => [
    ["<img src=loopback>", `<img src="${trapUrl("img")}" />`, "external-url"],
    [
      "<form action> submit",
      `<form action="${trapUrl("form")}"><button type="submit">go</button></form>`,
      "forbidden-element",
    ],
  ];

  /** Hostile components written to slip past the validator: the frame has to contain them. */
  const runtimeCases = (): Array<{
    name: string;
    source: string;
    click?: boolean;
    expectKilled?: boolean;
  }> => [
    {
      name: "fetch by a name built at run time",
      source: `export default () => { globalThis[${name("fetch")}]("${trapUrl("fetch2")}"); return <p>x</p>; }`,
    },
    {
      name: "Function via constructor chain, run-time names",
      source: `export default () => { const k = ${name("constructor")}; const g = (() => {})[k][k]("return this")(); g[${name("fetch")}]("${trapUrl("fn")}"); return <p>x</p>; }`,
    },
    {
      name: "window via a click event, then location",
      click: true,
      source: `export default () => <button onClick={(e) => { const w = e[${name("target")}][${name("ownerDocument")}][${name("defaultView")}]; w[${name("location")}] = "${trapUrl("nav")}"; w[${name("open")}]("${trapUrl("popup2")}"); }}>go</button>;`,
    },
    {
      name: "forged elements (<a>, <meta refresh>, <img>, <form>) past createElement",
      click: true,
      source: `const el = (type, props) => ({ $$typeof: Symbol.for("react.transitional.element"), type, key: null, props });
export default () => [
  el("a", { href: "${trapUrl("a")}", children: "go" }),
  el("meta", { httpEquiv: "refresh", content: "0;url=${trapUrl("meta")}" }),
  el("img", { src: "${trapUrl("forged-img")}" }),
  el("form", { action: "${trapUrl("form2")}", children: el("button", { type: "submit", children: "go" }) }),
  <button key="b">go</button>,
];`,
    },
    {
      name: "<img> with a run-time URL",
      source: `export default () => <img src={${JSON.stringify(trapUrl("img2"))}.split("").join("")} />;`,
    },
    {
      name: "busy loop that the validator cannot prove",
      source: `export default () => { let i = 0; while (i >= 0) i++; return <p>never</p>; }`,
      expectKilled: true,
    },
  ];

  it("rejects the statically visible attacks and contains the rest at run time", async () => {
    const matrix: Array<{ attack: string; stopped: string }> = [];
    for (const [attack, body, rule] of staticCases()) {
      const response = await postSource(`export default function C() {\n  ${body}\n  return null;\n}`);
      const report = ((await response.json()) as Rejected).report;
      expect(response.status, attack).toBe(422);
      expect(
        report.findings.map((f) => f.rule),
        attack,
      ).toContain(rule);
      matrix.push({ attack, stopped: `static: ${rule}` });
    }
    for (const [attack, jsx, rule] of staticJsx()) {
      const response = await postSource(`export default function C() { return ${jsx}; }`);
      expect(response.status, attack).toBe(422);
      expect(
        ((await response.json()) as Rejected).report.findings.map((f) => f.rule),
        attack,
      ).toContain(rule);
      matrix.push({ attack, stopped: `static: ${rule}` });
    }
    for (const c of runtimeCases()) {
      const created = await create(c.source);
      const hitsBefore = trapHits.length;
      const { context, page, popups, url } = await open(created.render_url);
      try {
        if (c.expectKilled) {
          await page.waitForFunction(
            () => (window as unknown as { __genui: HostState }).__genui.state === "killed",
            undefined,
            { timeout: 20_000 },
          );
          expect(await page.locator("iframe").count()).toBe(0);
        } else {
          await page.waitForFunction(() =>
            ["ready", "error"].includes((window as unknown as { __genui: HostState }).__genui.state),
          );
          const frame = page.frameLocator("iframe");
          if (c.click) await frame.locator("button").last().click({ timeout: 5000 });
          await page.waitForTimeout(1500);
          // The membrane, not only the CSP: nothing that loads, navigates or submits reached the frame's DOM.
          if (!(await hostState(page)).errors.length)
            expect(
              await frame.locator("#root :is(a, meta, form, iframe, img[src^='http'])").count(),
              await frame.locator("#root").innerHTML(),
            ).toBe(0);
        }
        const state = await hostState(page);
        // The page stays responsive: a round trip through its event loop answers at once.
        const started = Date.now();
        expect(await page.evaluate(() => 1 + 1)).toBe(2);
        expect(Date.now() - started).toBeLessThan(1000);
        expect(page.url(), c.name).toBe(url);
        expect(popups, c.name).toEqual([]);
        expect(trapHits.slice(hitsBefore), c.name).toEqual([]);
        matrix.push({
          attack: c.name,
          stopped: c.expectKilled
            ? `run time: watchdog removed the frame after ${state.killedAfterMs} ms`
            : `run time: ${state.errors[0] ? `error "${state.errors[0].slice(0, 60)}"` : "rendered inert"}`,
        });
      } finally {
        await context.close();
      }
    }
    console.table(matrix);
    expect(trapHits).toEqual([]);
  }, 180_000);
});
