import { TOOL_CALL_MARKER } from "../../../../schema/tools/tool-call-text.ts";
import {
  BadRequestError,
  EngineFailureError,
  UnknownAdapterError,
} from "../../../../schema/wire/v2/index.ts";
import type { Engine, EngineAdapterSlots, EngineGenerateRequest, EngineGenerateResult } from "../engine.ts";
import { runCompletion } from "./completion-stream.ts";
import { createEngineHttpClient } from "./engine-http-client.ts";
import {
  OPENAI_HTTP_FLAVORS,
  computeFingerprint,
  type OpenAiHttpAdapterOption,
  type OpenAiHttpFlavorName,
  type ServedAdapter,
} from "./flavors.ts";

export type { OpenAiHttpAdapterOption, OpenAiHttpFlavorName } from "./flavors.ts";

export interface OpenAiHttpEngineOptions {
  flavor: OpenAiHttpFlavorName;
  /** Server root, without `/v1` (e.g. `http://10.0.0.5:8000`). */
  baseUrl: string;
  apiKey?: string | undefined;
  /** The served base model name (vLLM `--served-model-name`, or the model id `/v1/models` lists). */
  baseModel: string;
  adapters: readonly OpenAiHttpAdapterOption[];
  /** Injected so the engine stays runtime-agnostic and tests can intercept it. */
  fetch: typeof fetch;
  /** Injected clock in milliseconds, for prefill/decode timings. */
  now: () => number;
  /** How many recently served conversations per adapter `snapshot()` reports as warm. */
  warmSlotsPerAdapter: number;
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
  served: ServedAdapter;
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
 * serving: vLLM gets every LoRA loaded and verified; llama-server gets its LoRA ids mapped.
 */
export async function createOpenAiHttpEngine(options: OpenAiHttpEngineOptions): Promise<Engine> {
  checkOptions(options);
  const flavor = OPENAI_HTTP_FLAVORS[options.flavor];
  const client = createEngineHttpClient(options);
  const prepared = await flavor.prepareAdapters(client, options);
  const states = new Map<string, AdapterState>(
    prepared.map((served) => [
      served.id,
      { served, recent: createRecentConversations(options.warmSlotsPerAdapter), inFlight: 0 },
    ]),
  );
  // close() aborts in-flight generations through this, with a reason callers can tell apart from a cancel.
  const closing = new AbortController();

  async function generate(request: EngineGenerateRequest): Promise<EngineGenerateResult> {
    const state = states.get(request.adapter);
    if (state === undefined) {
      throw new UnknownAdapterError(
        `adapter "${request.adapter}" is not served by this ${flavor.name} engine`,
      );
    }
    if (closing.signal.aborted) throw new EngineFailureError("engine is closed");
    const forced = forcedPrefix(request);
    state.inFlight += 1;
    try {
      if (forced !== "") request.onTextDelta?.(forced);
      const result = await runCompletion({
        client,
        body: flavor.buildCompletionBody(state.served.route, { ...request, prompt: request.prompt + forced }),
        signal: AbortSignal.any([request.signal, closing.signal]),
        now: options.now,
        onTextDelta: request.onTextDelta,
        onFirstToken: () => state.recent.touch(request.conversationId),
      });
      return { ...result, text: forced + result.text };
    } finally {
      state.inFlight -= 1;
    }
  }

  function snapshot(): EngineAdapterSlots[] {
    return [...states.values()].map((state) => ({
      adapter: state.served.id,
      totalSlots: options.warmSlotsPerAdapter,
      freeSlots: Math.max(0, options.warmSlotsPerAdapter - state.inFlight),
      warmConversations: state.recent.list(),
      waiting: 0,
    }));
  }

  return {
    kind: flavor.name,
    baseModel: {
      name: options.baseModel,
      revision: await computeFingerprint([flavor.name, options.baseModel]),
    },
    adapters: prepared.map((served) => ({ id: served.id, revision: served.revision, lora: served.lora })),
    features: ["output:json_schema", "output:json_object", "output:tools", "output:grammar"],
    generate,
    snapshot,
    close() {
      closing.abort(new EngineFailureError("engine closed during generation"));
      return Promise.resolve();
    },
  };
}
