import { EngineFailureError, UnknownAdapterError } from "../../../../schema/wire/v1/index.ts";
import type { Engine, EngineAdapterSlots, EngineGenerateRequest, EngineGenerateResult } from "../engine.ts";
import { buildCompletionBody } from "./build-completion-body.ts";
import { computeFingerprint } from "./compute-fingerprint.ts";
import { createEngineHttpClient } from "./engine-http-client.ts";
import type { OpenAiHttpEngineOptions } from "./openai-http-engine-options.ts";
import { prepareLlamaServerAdapters } from "./prepare-llama-server-adapters.ts";
import { prepareVllmAdapters } from "./prepare-vllm-adapters.ts";
import { createRecentConversations, type RecentConversations } from "./recent-conversations.ts";
import { runCompletion } from "./run-completion.ts";
import type { ServedAdapter } from "./served-adapter.ts";

export type {
  OpenAiHttpAdapterOption,
  OpenAiHttpEngineOptions,
  OpenAiHttpFlavor,
} from "./openai-http-engine-options.ts";

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
 * An Engine backed by a vLLM or llama-server process over its OpenAI-compatible HTTP API. Resolves before
 * serving: vLLM gets every LoRA loaded and verified; llama-server gets its LoRA ids mapped.
 */
export async function createOpenAiHttpEngine(options: OpenAiHttpEngineOptions): Promise<Engine> {
  checkOptions(options);
  const client = createEngineHttpClient(options);
  const prepared =
    options.flavor === "vllm"
      ? await prepareVllmAdapters(client, options)
      : await prepareLlamaServerAdapters(client, options);
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
        `adapter "${request.adapter}" is not served by this ${options.flavor} engine`,
      );
    }
    if (closing.signal.aborted) throw new EngineFailureError("engine is closed");
    state.inFlight += 1;
    try {
      return await runCompletion({
        client,
        body: buildCompletionBody(options.flavor, state.served.route, request),
        signal: AbortSignal.any([request.signal, closing.signal]),
        now: options.now,
        onTextDelta: request.onTextDelta,
        onFirstToken: () => state.recent.touch(request.conversationId),
      });
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
    kind: options.flavor,
    baseModel: {
      name: options.baseModel,
      revision: await computeFingerprint([options.flavor, options.baseModel]),
    },
    adapters: prepared.map((served) => ({ id: served.id, revision: served.revision, lora: served.lora })),
    generate,
    snapshot,
    async close() {
      closing.abort(new EngineFailureError("engine closed during generation"));
    },
  };
}
