import { GENUI_RPC } from "./component-contract.ts";

/**
 * The two documents of a render, each with its CSP sent as an HTTP header (a `<meta>` CSP would bind only after
 * parsing starts, and srcdoc/blob/data documents inherit the embedder's policy instead of having their own):
 *
 * - the host page, on the API origin (`/playground/render/{id}`): embeds the frame and speaks JSON-RPC with it;
 * - the frame document, on the sandbox origin (`/genui/frame/{id}`): the component's compiled code as an inert JSON
 *   data block, plus the prebuilt runtime script. It is sandboxed twice: by the iframe's `sandbox="allow-scripts"`
 *   and by the CSP `sandbox allow-scripts` directive, so opening the URL top-level gives no origin either.
 */

const html = (value: string) => value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
/** JSON inside a `<script type="application/json">`: no `</script>`, `<!--` or line separators can break out. */
const jsonBlock = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");

export interface RenderPage {
  body: string;
  headers: Record<string, string>;
}

const COMMON_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

export function frameCsp(sandboxOrigin: string, hostOrigin: string): string {
  return [
    "default-src 'none'",
    // SES compartments evaluate with the realm's evaluator, so the frame needs 'unsafe-eval'; component code reaches
    // only the compartment's evaluator, whose global scope has no DOM and no network.
    `script-src ${sandboxOrigin} 'unsafe-eval'`,
    "connect-src 'none'",
    "img-src data: blob:",
    "form-action 'none'",
    "frame-src 'none'",
    "child-src 'none'",
    "worker-src 'none'",
    "base-uri 'none'",
    `frame-ancestors ${hostOrigin}`,
    "sandbox allow-scripts",
  ].join("; ");
}

export function renderFrameDocument(input: {
  id: string;
  compiled: string;
  hostOrigin: string;
  sandboxOrigin: string;
  runtimeVersion: string;
}): RenderPage {
  const payload = jsonBlock({ id: input.id, code: input.compiled, hostOrigin: input.hostOrigin });
  return {
    body: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${html(input.id)}</title></head>
<body><div id="root"></div>
<script type="application/json" id="molmesh-component">${payload}</script>
<script src="/genui/runtime.js?v=${html(input.runtimeVersion)}"></script>
</body></html>`,
    headers: {
      ...COMMON_HEADERS,
      "content-security-policy": frameCsp(input.sandboxOrigin, input.hostOrigin),
    },
  };
}

export interface HostPageOptions {
  id: string;
  frameUrl: string;
  sandboxOrigin: string;
  /** A frame that answers no ping for this long is removed. */
  watchdogMs: number;
  nonce: string;
}

export function hostCsp(sandboxOrigin: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `frame-src ${sandboxOrigin}`,
    "img-src data:",
    "connect-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

/**
 * The host side of the protocol, as an inline (nonce'd) script. A message counts only when its `source` is this
 * frame's window and it is well-formed JSON-RPC of a known method; the frame's origin is opaque ("null"), so the
 * source check is what binds it. Any answer from the frame is a heartbeat; silence past the watchdog removes it.
 */
const HOST_SCRIPT = `(() => {
  const cfg = JSON.parse(document.getElementById("molmesh-render").textContent);
  const RPC = cfg.rpc;
  const state = (window.__genui = { state: "loading", messages: [], errors: [], size: null, killedAfterMs: null });
  const status = document.getElementById("status");
  const set = (s, detail) => {
    state.state = s;
    status.dataset.state = s;
    status.textContent = detail ? s + ": " + detail : s;
  };
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("title", "GenUI component " + cfg.id);
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.src = cfg.frameUrl;
  document.getElementById("slot").append(frame);
  const started = Date.now();
  let lastAnswer = started;
  let initialized = false;
  let nextPing = 1;
  const send = (m) => frame.contentWindow && frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, m), "*");
  const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
  const KNOWN = new Set(Object.values(RPC));
  const wellFormed = (m) =>
    isObject(m) && m.jsonrpc === "2.0" &&
    (m.method === undefined ? typeof m.id === "number" : typeof m.method === "string" && KNOWN.has(m.method)) &&
    (m.params === undefined || isObject(m.params));
  const textOf = (p) =>
    Array.isArray(p.content) && p.content.length > 0 && p.content.length <= 8 &&
    p.content.every((c) => isObject(c) && c.type === "text" && typeof c.text === "string" && c.text.length <= 4000)
      ? p.content.map((c) => c.text).join("\\n") : undefined;
  window.addEventListener("message", (event) => {
    if (event.source !== frame.contentWindow || !wellFormed(event.data)) return;
    const m = event.data;
    lastAnswer = Date.now();
    if (m.method === RPC.initialize && m.id !== undefined) {
      set("initializing");
      send({ id: m.id, result: { protocolVersion: "2026-01-26", hostInfo: { name: "molmesh-playground", version: "1" },
        hostCapabilities: { message: {} }, hostContext: { theme: "light", displayMode: "inline" } } });
    } else if (m.method === RPC.initialized) {
      initialized = true;
      set("ready");
    } else if (m.method === RPC.sizeChanged) {
      const h = Number(m.params && m.params.height);
      if (Number.isFinite(h)) { state.size = { height: h }; frame.style.height = Math.min(Math.max(h, 40), 2000) + "px"; }
    } else if (m.method === RPC.message && m.id !== undefined) {
      const text = textOf(m.params || {});
      if (text === undefined || m.params.role !== "user") return send({ id: m.id, error: { code: -32602, message: "invalid params" } });
      state.messages.push(text);
      const li = document.createElement("li");
      li.textContent = text;
      document.getElementById("messages").append(li);
      // Embedded in the playground (same origin), the message becomes the next turn there.
      if (window.parent !== window) window.parent.postMessage({ type: "molmesh/genui-message", id: cfg.id, text }, location.origin);
      send({ id: m.id, result: {} });
    } else if (m.method === RPC.error) {
      const message = String((m.params && m.params.message) || "error").slice(0, 2000);
      state.errors.push(message);
      set("error", message);
    }
  });
  const watchdog = setInterval(() => {
    const silentFor = Date.now() - lastAnswer;
    if (silentFor > (initialized ? cfg.watchdogMs : Math.max(cfg.watchdogMs, 15000))) {
      clearInterval(watchdog);
      frame.remove();
      state.killedAfterMs = silentFor;
      set("killed", "the component stopped answering and was removed");
      return;
    }
    send({ id: nextPing++, method: RPC.ping });
  }, Math.max(250, Math.floor(cfg.watchdogMs / 4)));
})();`;

export function renderHostPage(options: HostPageOptions): RenderPage {
  const config = jsonBlock({
    id: options.id,
    frameUrl: options.frameUrl,
    watchdogMs: options.watchdogMs,
    rpc: GENUI_RPC,
  });
  const n = html(options.nonce);
  return {
    body: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GenUI ${html(options.id)}</title>
<style nonce="${n}">
body { font: 14px system-ui, sans-serif; margin: 16px; color: #1f2328; }
iframe { width: 100%; height: 120px; border: 1px solid #d0d7de; border-radius: 8px; }
#status { color: #59636e; margin: 8px 0; }
</style></head>
<body>
<div id="status" data-state="loading">loading</div>
<div id="slot"></div>
<ol id="messages"></ol>
<script type="application/json" id="molmesh-render">${config}</script>
<script nonce="${n}">${HOST_SCRIPT}</script>
</body></html>`,
    headers: { ...COMMON_HEADERS, "content-security-policy": hostCsp(options.sandboxOrigin, options.nonce) },
  };
}
