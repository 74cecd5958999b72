/**
 * `GET /playground`: one self-contained page on the API origin to talk to the mesh by hand. The API key lives in
 * a closure of the inline script (never storage, cookies or the URL), the page creates a conversation and sends
 * `/v1/responses` with `stream: true`, parsing the SSE with fetch + ReadableStream. Each turn shows what the
 * mesh did: route label and confidence, hop timings, cached tokens, the summary once ready, the harness hash,
 * and a genui answer's component inline through its render link (the host page, which frames the component in
 * `<iframe sandbox="allow-scripts">` on the sandbox origin); a component's `ui/message` becomes the next user turn. All text goes in through `textContent`.
 */

export function playgroundCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    // The render host page is on this origin; the component frame inside it is on the sandbox origin.
    "frame-src 'self'",
    "img-src data:",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const STYLE = `
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1f2328; background: #f6f8fa; }
header, main, footer { max-width: 860px; margin: 0 auto; padding: 12px 16px; }
h1 { font-size: 18px; margin: 0 0 8px; }
input, textarea, button { font: inherit; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; }
button { background: #1f6feb; color: #fff; border-color: #1f6feb; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
.row { display: flex; gap: 8px; flex-wrap: wrap; }
.row > input, .row > textarea { flex: 1 1 200px; min-width: 0; }
#status { color: #59636e; font-size: 13px; min-height: 1.4em; overflow-wrap: anywhere; }
.turn { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 12px; margin: 10px 0; }
.user { font-weight: 600; white-space: pre-wrap; overflow-wrap: anywhere; }
.answer { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; font-family: ui-monospace, monospace;
  font-size: 13px; max-height: 320px; overflow: auto; background: #f6f8fa; border-radius: 6px; padding: 6px; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 4px 12px;
  font-size: 12px; color: #59636e; }
.facts span { overflow-wrap: anywhere; }
.facts b { color: #1f2328; font-weight: 600; }
.summary { font-size: 13px; color: #59636e; font-style: italic; overflow-wrap: anywhere; }
.genui { font-size: 12px; margin-top: 6px; overflow-wrap: anywhere; }
.genui iframe { width: 100%; height: 260px; border: 1px solid #d0d7de; border-radius: 6px; background: #fff; }
.error { color: #cf222e; }
`;

/** The page's logic, as an inline (nonce'd) script. */
const SCRIPT = String.raw`(() => {
  "use strict";
  let apiKey = "";
  let conversationId = "";
  let busy = false;
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const status = (text, bad) => { $("status").textContent = text; $("status").classList.toggle("error", !!bad); };
  const api = async (path, init = {}) => {
    const headers = Object.assign({ authorization: "Bearer " + apiKey }, init.body ? { "content-type": "application/json" } : {});
    const response = await fetch(path, Object.assign({}, init, { headers }));
    if (!response.ok && !init.stream) {
      const body = await response.json().catch(() => ({}));
      throw new Error((body.error && body.error.message) || "HTTP " + response.status);
    }
    return response;
  };
  const ms = (v) => (typeof v === "number" ? Math.round(v) + " ms" : "—");
  const fact = (box, name, value) => {
    const span = el("span");
    span.dataset.fact = name;
    span.append(name + " ", el("b", "", value));
    box.append(span);
  };
  const frames = new Map();

  function renderFacts(view, response) {
    const mol = (response && response.mol) || {};
    view.turn.dataset.label = mol.label || "";
    const box = view.facts;
    box.replaceChildren();
    const route = mol.route || {};
    fact(box, "route", (mol.label || "—") + (mol.source && mol.source !== "router" ? " (" + mol.source + ")" : ""));
    fact(box, "confidence", typeof route.confidence === "number" ? route.confidence.toFixed(2) : "—");
    const t = mol.timings || {};
    fact(box, "route hop", ms(t.routeMs));
    fact(box, "first token", ms(t.answerFirstTokenMs));
    fact(box, "answer", ms(t.answerTotalMs));
    fact(box, "summary hop", ms(t.summaryMs));
    const answer = (mol.usage || {}).answer;
    fact(box, "cached tokens", answer ? answer.cachedPromptTokens + " / " + answer.promptTokens : "—");
    fact(box, "harness", mol.harnessHash ? mol.harnessHash.replace(/^sha256:/, "").slice(0, 12) : "—");
    const summary = mol.summary || {};
    view.summary.textContent = summary.status === "ready" ? "summary: " + summary.text : "summary: " + (summary.status || "—");
    renderGenui(view, mol.genui);
  }

  function renderGenui(view, genui) {
    if (!genui || view.genuiShown) return;
    view.genuiShown = true;
    const box = el("div", "genui");
    box.dataset.status = genui.status;
    box.append(el("div", "", "genui: " + genui.status + " (" + genui.findings + " finding" + (genui.findings === 1 ? "" : "s") + ")"));
    if (genui.summary) box.append(el("div", "error", genui.summary));
    if (genui.renderUrl) {
      const frame = document.createElement("iframe");
      // The render host page is our own code on this origin; the component runs in the frame inside it, on the
      // sandbox origin, under sandbox="allow-scripts" alone. Sandboxing the host page opaque as well would make the
      // frame's CSP frame-ancestors (which names this origin) refuse it: an opaque ancestor matches no source.
      frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
      frame.setAttribute("title", "component " + genui.componentId);
      frame.setAttribute("referrerpolicy", "no-referrer");
      frame.src = genui.renderUrl;
      frames.set(frame, genui.componentId);
      box.append(frame);
    }
    view.turn.append(box);
  }

  function addTurn(text) {
    const turn = el("article", "turn");
    const view = { turn, answer: el("div", "answer"), facts: el("div", "facts"), summary: el("div", "summary") };
    turn.append(el("div", "user", text), view.answer, view.facts, view.summary);
    $("turns").append(turn);
    turn.scrollIntoView({ block: "end" });
    return view;
  }

  /** SSE frames from a fetch body: "event:" and "data:" lines, a blank line ends a frame. */
  async function* sseEvents(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length > 0) yield { event, data: JSON.parse(data.join("\n")) };
      }
    }
  }

  async function pollSummary(view, responseId) {
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      const page = await (await api("/v1/conversations/" + conversationId + "/items?order=desc&limit=2")).json();
      const item = page.data.find((x) => x.role === "assistant" && x.mol && x.mol.turnId === view.turnId);
      const summary = item && item.mol.summary;
      if (summary && summary.status !== "pending") return renderFacts(view, { mol: item.mol });
    }
  }

  async function send(text) {
    if (busy || !text.trim()) return;
    busy = true;
    $("send").disabled = true;
    const view = addTurn(text);
    try {
      if (!conversationId) conversationId = (await (await api("/v1/conversations", { method: "POST", body: "{}" })).json()).id;
      status("streaming…");
      const response = await api("/v1/responses", {
        method: "POST",
        stream: true,
        body: JSON.stringify({ conversation: conversationId, input: text, stream: true }),
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        throw new Error((body.error && body.error.message) || "HTTP " + response.status);
      }
      let finished;
      for await (const { event, data } of sseEvents(response.body)) {
        if (event === "response.created") { view.turnId = data.response.mol && data.response.mol.turnId; renderFacts(view, data.response); }
        else if (event === "response.output_text.delta") view.answer.textContent += data.delta;
        else if (event === "response.completed" || event === "response.incomplete") finished = data.response;
        else if (event === "response.failed") throw new Error((data.response.error && data.response.error.message) || "failed");
        else if (event === "error") throw new Error(data.message || "stream error");
      }
      if (finished) {
        view.answer.textContent = finished.output_text || view.answer.textContent;
        renderFacts(view, finished);
        status("done");
        if (finished.mol && finished.mol.summary && finished.mol.summary.status === "pending") void pollSummary(view).catch(() => undefined);
      }
    } catch (error) {
      view.answer.append(el("div", "error", String(error.message || error)));
      status(String(error.message || error), true);
    } finally {
      busy = false;
      $("send").disabled = false;
    }
  }

  $("signin").addEventListener("click", async () => {
    apiKey = $("key").value.trim();
    $("key").value = "";
    try {
      await api("/v1/models");
      conversationId = "";
      $("chat").hidden = false;
      status("signed in; the key is kept in this page's memory only");
      $("input").focus();
    } catch (error) {
      apiKey = "";
      status("sign-in failed: " + error.message, true);
    }
  });
  // The page follows the conversation as it grows (answers stream, facts, summaries and components arrive) while
  // the reader is at its end, as chat apps do; a reader who scrolled up keeps their place. Following also keeps a
  // new component on screen, where Chromium paints it: an offscreen cross-origin frame is throttled.
  let following = true;
  const atEnd = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 48;
  window.addEventListener("scroll", () => { following = atEnd(); }, { passive: true });
  new ResizeObserver(() => { if (following && !atEnd()) window.scrollTo(0, document.documentElement.scrollHeight); }).observe($("turns"));
  $("send").addEventListener("click", () => { const text = $("input").value; $("input").value = ""; void send(text); });
  $("input").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("send").click(); } });
  // A component's ui/message, relayed by its render host page (sandboxed, so its origin is opaque: the source binds it).
  window.addEventListener("message", (event) => {
    const frame = [...frames.keys()].find((f) => f.contentWindow === event.source);
    const m = event.data;
    if (!frame || !m || m.type !== "molmesh/genui-message" || typeof m.text !== "string") return;
    void send(m.text.slice(0, 4000));
  });
})();`;

const html = (value: string) => value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export function renderPlaygroundPage(nonce: string): { body: string; headers: Record<string, string> } {
  const n = html(nonce);
  return {
    body: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>molmesh playground</title><style nonce="${n}">${STYLE}</style></head>
<body>
<header><h1>molmesh playground</h1>
<div class="row"><input id="key" type="password" autocomplete="off" placeholder="API key (sk-…)" aria-label="API key">
<button id="signin" type="button">Sign in</button></div>
<div id="status" role="status">Paste an API key: it stays in this page's memory and is gone on reload.</div></header>
<main id="chat" hidden>
<div id="turns"></div>
<div class="row"><textarea id="input" rows="2" placeholder="Message (Enter sends)" aria-label="Message"></textarea>
<button id="send" type="button">Send</button></div>
</main>
<script nonce="${n}">${SCRIPT}</script>
</body></html>`,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "content-security-policy": playgroundCsp(nonce),
    },
  };
}
