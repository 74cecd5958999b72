import "ses";
import * as React from "react";
import { createRoot } from "react-dom/client";
import { GENUI_KIT_EXPORTS, GENUI_RPC } from "../component-contract.ts";
import { createSafeReact } from "./safe-react.ts";
import { createUiKit } from "./ui-kit.ts";

/**
 * The frame's runtime, served as one prebuilt script from the sandbox origin. Order matters: React loads, then
 * `lockdown()` freezes the shared intrinsics (so `(()=>{}).constructor` is an inert function that throws), then the
 * component's code is evaluated in a `Compartment` whose global object holds only React (the safe one), the kit and a
 * `require` for the two allowed modules. `fetch`, `location`, `window`, `document` do not exist in there, however the
 * name is built. Outside this realm boundary stand the browser's: a sandboxed, cross-origin iframe and its CSP header.
 */

interface FramePayload {
  id: string;
  code: string;
  hostOrigin: string;
}
type RpcMessage = {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: unknown;
  result?: unknown;
};

const payloadElement = document.getElementById("molmesh-component");
const payload = JSON.parse(payloadElement?.textContent ?? "null") as FramePayload | null;

let nextId = 1;
const pending = new Map<number, (result: unknown) => void>();
const post = (message: Omit<RpcMessage, "jsonrpc">) =>
  payload && window.parent.postMessage({ jsonrpc: "2.0", ...message }, payload.hostOrigin);
const notify = (method: string, params: unknown) => post({ method, params });
const request = (method: string, params: unknown) =>
  new Promise<unknown>((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    post({ id, method, params });
  });
const reportError = (error: unknown) =>
  notify(GENUI_RPC.error, {
    message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  });

/** A posted message is whatever its sender put there; only JSON-RPC 2.0 is read. */
const isRpcMessage = (data: unknown): data is RpcMessage =>
  typeof data === "object" && data !== null && "jsonrpc" in data && data.jsonrpc === "2.0";

window.addEventListener("message", (event: MessageEvent<unknown>) => {
  // Only the embedding host speaks to the frame; anything else (another frame, an extension) is ignored.
  if (!payload || event.source !== window.parent || event.origin !== payload.hostOrigin) return;
  const message = event.data;
  if (!isRpcMessage(message)) return;
  if (message.method === GENUI_RPC.ping && message.id !== undefined)
    return post({ id: message.id, result: {} });
  if (message.method === undefined && typeof message.id === "number") {
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  }
});
window.addEventListener("error", (event) => reportError(event.error ?? event.message));
window.addEventListener("unhandledrejection", (event) => reportError(event.reason));

class ErrorBoundary extends React.Component<{ children: React.ReactNode }, { error: string | null }> {
  override state = { error: null as string | null };
  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  override componentDidCatch(error: unknown) {
    reportError(error);
  }
  override render() {
    return this.state.error === null
      ? this.props.children
      : React.createElement("pre", { style: { color: "#cf222e", whiteSpace: "pre-wrap" } }, this.state.error);
  }
}

function loadComponent(code: string): React.FunctionComponent<Record<string, unknown>> {
  const kit = createUiKit({
    sendMessage: (text) =>
      void request(GENUI_RPC.message, {
        role: "user",
        content: [{ type: "text", text: text.slice(0, 4000) }],
      }),
  });
  const kitComponents = new Set<unknown>(GENUI_KIT_EXPORTS.map((name) => kit[name]));
  const safe = createSafeReact(kitComponents, harden, reportError);
  const modules: Record<string, unknown> = { react: harden(safe.react), "@molmesh/ui": harden(kit) };
  const require = harden((specifier: string) => {
    if (!(specifier in modules)) throw new Error(`module "${specifier}" is not available`);
    return modules[specifier];
  });
  const compartment = new Compartment({
    globals: { React: modules.react, require, console: harden({ log: console.log, warn: console.warn }) },
    __options__: true,
  });
  const factory = compartment.evaluate(`(function (exports, module) {\n${code}\n})`) as (
    exports: Record<string, unknown>,
    module: { exports: Record<string, unknown> },
  ) => void;
  const module = { exports: {} as Record<string, unknown> };
  factory(module.exports, module);
  const component = module.exports.default;
  if (typeof component !== "function") throw new TypeError("the default export is not a function component");
  return safe.wrapComponent(component as (...args: never[]) => unknown);
}

async function start(): Promise<void> {
  if (!payload) throw new Error("no component in this frame");
  // SES' default evaluator keeps code inside compartments; errors keep their stacks for the host's report.
  lockdown({ errorTaming: "unsafe", consoleTaming: "unsafe" });
  await request(GENUI_RPC.initialize, {
    protocolVersion: "2026-01-26",
    appInfo: { name: "molmesh-genui-frame", version: "1" },
    appCapabilities: {},
  });
  notify(GENUI_RPC.initialized, {});
  const Component = loadComponent(payload.code);
  const rootElement = document.getElementById("root");
  if (!rootElement) throw new Error("no #root");
  new ResizeObserver(() =>
    notify(GENUI_RPC.sizeChanged, { width: rootElement.scrollWidth, height: rootElement.scrollHeight }),
  ).observe(rootElement);
  createRoot(rootElement).render(
    React.createElement(ErrorBoundary, null, React.createElement(Component, {})),
  );
}

start().catch(reportError);
