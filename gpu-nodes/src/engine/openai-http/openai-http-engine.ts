import { TOOL_CALL_MARKER } from "../../../../schema/tools/tool-call-text.ts";
import { BadRequestError, EngineFailureError, type AdapterId } from "../../../../schema/wire/v2/index.ts";
import { formatAdapterName } from "../../../../schema/wire/v2/adapter-name.ts";
import type {
  Engine,
  EngineAdapterInfo,
  EngineAdapterSlots,
  EngineGenerateRequest,
  EngineGenerateResult,
  EngineLoadAdapterRequest,
} from "../engine.ts";
import { HeldAdapters, readLoadRequest, reloadHeld } from "../held-adapters.ts";
import { createSerialQueue } from "../serial-queue.ts";
import { runCompletion } from "./completion-stream.ts";
import { createEngineHttpClient } from "./engine-http-client.ts";
import {
  computeFingerprint,
  type AdapterRoute,
  type AdapterToServe,
  type OpenAiHttpFlavor,
  type OpenAiHttpFlavorName,
} from "./flavors.ts";
import { llamaServerFlavor } from "./llama-server-flavor.ts";
import { defaultCacheSaltSecret } from "./tenant-cache.ts";
import { vllmFlavor } from "./vllm-flavor.ts";

export type { OpenAiHttpFlavorName } from "./flavors.ts";

const OPENAI_HTTP_FLAVORS: Readonly<Record<OpenAiHttpFlavorName, OpenAiHttpFlavor>> = {
  vllm: vllmFlavor,
  "llama-server": llamaServerFlavor,
};

export interface OpenAiHttpAdapterOption {
  /** molmesh adapter label (l0, chat, agent, …). */
  id: AdapterId;
  /** LoRA location as the engine server sees it; absent = the adapter runs on the bare base model. */
  path?: string | undefined;
  /**
   * vLLM: the LoRA name the server already serves it under (a `--lora-modules` name); default: the revision's
   * versioned name, loaded at run time. llama-server matches adapters by path instead.
   */
  name?: string;
  /** llama-server: scale of this LoRA when it is the chosen one (default 1). vLLM has no per-request scale. */
  scale?: number;
}

export interface OpenAiHttpEngineOptions {
  flavor: OpenAiHttpFlavorName;
  /** Server root, without `/v1` (e.g. `http://10.0.0.5:8000`). */
  baseUrl: string;
  apiKey?: string | undefined;
  /** The served base model name (vLLM `--served-model-name`, or the model id `/v1/models` lists). */
  baseModel: string;
  /** Adapters served from the start; `loadAdapter` adds more while the engine runs. */
  adapters: readonly OpenAiHttpAdapterOption[];
  /**
   * The content fingerprint of an adapter path when this machine can read it (the server's files are often on
   * its disk too); undefined when it cannot. Without one, a revision is a digest of flavor, base and path, so
   * weights replaced in place keep their name: give each trained revision a path of its own.
   */
  fingerprintPath?: ((path: string) => Promise<string | undefined>) | undefined;
  /** Injected so the engine stays runtime-agnostic and tests can intercept it. */
  fetch: typeof fetch;
  /** Injected clock in milliseconds, for prefill/decode timings. */
  now: () => number;
  /** How many recently served conversations per adapter `snapshot()` reports as warm. */
  warmSlotsPerAdapter: number;
  /**
   * vLLM: the secret tenants' `cache_salt`s are derived from (MOL_CACHE_SALT_SECRET); the same on every node of one
   * server. Default: one derived from `baseUrl` and `baseModel` (see tenant-cache.ts for the trade-off).
   */
  cacheSaltSecret?: string | undefined;
  /** Where a degraded setup is reported once; default: nowhere. */
  warn?: ((message: string) => void) | undefined;
}

export interface RecentConversations {
  /** Marks a conversation as just served, evicting the least recently served past capacity. */
  touch(conversationId: string): void;
  /** Most recently served first. */
  list(): string[];
}

/**
 * The remote server manages the real KV (vLLM prefix cache, llama-server slots) and does not tell which
 * conversations it still holds, so the conversations this node served last are the best warm hint we have.
 */
export function createRecentConversations(capacity: number): RecentConversations {
  // A Map iterates in insertion order; re-inserting on touch keeps the oldest first.
  const entries = new Map<string, true>();
  return {
    touch(conversationId) {
      entries.delete(conversationId);
      entries.set(conversationId, true);
      for (const oldest of entries.keys()) {
        if (entries.size <= capacity) break;
        entries.delete(oldest);
      }
    },
    list() {
      return [...entries.keys()].reverse();
    },
  };
}

interface AdapterState {
  info: EngineAdapterInfo;
  served: AdapterToServe;
  route: AdapterRoute;
  recent: RecentConversations;
  inFlight: number;
}

function checkOptions(options: OpenAiHttpEngineOptions): void {
  if (!Number.isInteger(options.warmSlotsPerAdapter) || options.warmSlotsPerAdapter < 1) {
    throw new RangeError(
      `warmSlotsPerAdapter must be a positive integer, got ${options.warmSlotsPerAdapter}`,
    );
  }
  const ids = options.adapters.map((adapter) => adapter.id);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate !== undefined) throw new RangeError(`adapter "${duplicate}" is configured twice`);
}

/**
 * Text the answer must start with, decoded by no one: a required tool call's marker goes at the end of the
 * prompt (the view stays a prefix, so the server's KV reuse holds) and the server decodes only the call.
 * `auto` would need the marker-or-text grammar, which these servers' JSON schema modes cannot express.
 */
function forcedPrefix(request: EngineGenerateRequest): string {
  if (request.constraint?.type !== "tools") return "";
  if (request.constraint.mode === "auto") {
    throw new BadRequestError(
      'this engine cannot constrain tool choice "auto"; send it to a node with output:tools-auto',
    );
  }
  return TOOL_CALL_MARKER;
}

/**
 * An Engine backed by a vLLM or llama-server process over its OpenAI-compatible HTTP API. Resolves before
 * serving: vLLM gets every configured LoRA loaded and verified; llama-server gets its LoRAs mapped. Adapters
 * load and unload while it runs (see the flavors for what each server can free).
 */
export async function createOpenAiHttpEngine(options: OpenAiHttpEngineOptions): Promise<Engine> {
  checkOptions(options);
  const flavor = OPENAI_HTTP_FLAVORS[options.flavor];
  const client = createEngineHttpClient(options);
  const connection = await flavor.connect(client, {
    baseModel: options.baseModel,
    cacheSaltSecret: options.cacheSaltSecret ?? defaultCacheSaltSecret(options.baseUrl, options.baseModel),
    warn: options.warn ?? (() => undefined),
  });
  const baseRevision = await computeFingerprint([flavor.name, options.baseModel]);
  const held = new HeldAdapters<AdapterState>();
  // close() aborts in-flight generations through this, with a reason callers can tell apart from a cancel.
  const closing = new AbortController();

  const serially = createSerialQueue();

  const revisionOf = async (path: string | undefined): Promise<string> => {
    if (path === undefined) return baseRevision;
    const content = await options.fingerprintPath?.(path);
    return content ?? (await computeFingerprint([flavor.name, options.baseModel, path]));
  };

  /** Names the revision a load asks for. */
  const describe = async (
    request: EngineLoadAdapterRequest,
    servedName?: string,
  ): Promise<{ served: AdapterToServe; revision: string }> => {
    const { label, scale } = readLoadRequest(request);
    const revision = await revisionOf(request.path);
    const name = formatAdapterName(label, revision);
    return { served: { label, name, path: request.path, scale, servedName }, revision };
  };

  const hold = (served: AdapterToServe, route: AdapterRoute, revision: string): EngineAdapterInfo => {
    const info = { id: served.label, name: served.name, revision, lora: served.path !== undefined };
    held.add({
      info,
      served,
      route,
      recent: createRecentConversations(options.warmSlotsPerAdapter),
      inFlight: 0,
    });
    return info;
  };

  const configured = await Promise.all(
    options.adapters.map((adapter) =>
      describe({ label: adapter.id, path: adapter.path, scale: adapter.scale }, adapter.name),
    ),
  );
  const routes = await connection.prepare(configured.map(({ served }) => served));
  for (const [index, { served, revision }] of configured.entries()) {
    hold(served, routes[index] as AdapterRoute, revision);
  }

  async function load(request: EngineLoadAdapterRequest): Promise<EngineAdapterInfo> {
    if (closing.signal.aborted) throw new EngineFailureError("engine is closed");
    const { served, revision } = await describe(request);
    const holding = held.get(served.name);
    if (holding) return reloadHeld(holding.info, holding.served.scale, served.scale);
    const [route] = await connection.prepare([served]);
    if (route === undefined) throw new EngineFailureError(`no route for ${served.name}`);
    return hold(served, route, revision);
  }

  async function generate(request: EngineGenerateRequest): Promise<EngineGenerateResult> {
    if (closing.signal.aborted) throw new EngineFailureError("engine is closed");
    const claim = held.claim(request.adapter, `is not served by this ${flavor.name} engine`);
    const state = claim.revision;
    state.inFlight += 1;
    try {
      const forced = forcedPrefix(request);
      if (forced !== "") request.onTextDelta?.(forced);
      const body = await connection.buildCompletionBody(state.route, {
        ...request,
        prompt: request.prompt + forced,
      });
      const result = await runCompletion({
        client,
        body,
        signal: AbortSignal.any([request.signal, closing.signal]),
        now: options.now,
        onTextDelta: request.onTextDelta,
        onFirstToken: () => state.recent.touch(request.conversationId),
      });
      return { ...result, text: forced + result.text };
    } finally {
      state.inFlight -= 1;
      claim.release();
    }
  }

  function snapshot(): EngineAdapterSlots[] {
    return held.list().map((state) => ({
      adapter: state.info.id,
      name: state.info.name,
      totalSlots: options.warmSlotsPerAdapter,
      freeSlots: Math.max(0, options.warmSlotsPerAdapter - state.inFlight),
      warmConversations: state.recent.list(),
      waiting: 0,
    }));
  }

  return {
    kind: flavor.name,
    baseModel: { name: options.baseModel, revision: baseRevision },
    adapters: () => held.list().map((state) => state.info),
    resolveAdapter: (requested) => held.resolve(requested)?.info,
    features: ["output:json_schema", "output:json_object", "output:tools", "output:grammar"],
    generate,
    loadAdapter: (request) => serially(() => load(request)),
    async unloadAdapter(name) {
      const state = held.retire(name);
      await held.drained(state);
      // Loaded again meanwhile (the same name is the same weights): the server keeps them for it.
      await serially(() =>
        held.get(state.info.name) ? Promise.resolve() : connection.release(state.served),
      );
    },
    snapshot,
    close() {
      closing.abort(new EngineFailureError("engine closed during generation"));
      return Promise.resolve();
    },
  };
}
