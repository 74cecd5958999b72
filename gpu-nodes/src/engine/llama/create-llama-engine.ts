import { basename, resolve as resolvePath } from "node:path";
import {
  getLlama,
  LlamaLogLevel,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
} from "node-llama-cpp";
import {
  BadRequestError,
  EngineFailureError,
  ROUTER_ADAPTER,
  type AdapterId,
  type ServedModel,
} from "../../../../schema/wire/v2/index.ts";
import { formatAdapterName, type AdapterName } from "../../../../schema/wire/v2/adapter-name.ts";
import {
  type Engine,
  type EngineAdapterInfo,
  type EngineGenerateRequest,
  type EngineGenerateResult,
  type EngineLoadAdapterRequest,
} from "../engine.ts";
import { HeldAdapters, readLoadRequest, reloadHeld } from "../held-adapters.ts";
import { createSerialQueue } from "../serial-queue.ts";
import { DEFAULT_HOP_PRIORITY, HopPriority, type HopPriorityOptions } from "../hop-priority.ts";
import { checkLoraFile, describeGgufFile } from "./check-lora-file.ts";
import { createConstraintGrammars } from "./constraint-grammars.ts";
import { generateOnSequence } from "./generate-on-sequence.ts";
import { releaseLora } from "./release-lora.ts";
import { scoreChoicesOnSequence } from "./score-choices.ts";
import {
  cutAtStableBoundary,
  describeServedModel,
  readFileMetadata,
  tokenizeView,
} from "./tokenize-prompt.ts";
import {
  MIN_DEFAULT_CONTEXT_TOKENS,
  buildDefaultHarness,
} from "../../../../schema/harness/default-harness.ts";
import { renderRouterViewOpening } from "../../../../schema/harness/render-view-lines.ts";
import { SlotPool } from "./slot-pool.ts";
import { SlotTokens } from "./slot-tokens.ts";

export interface LlamaAdapterConfig {
  id: AdapterId;
  /** LoRA GGUF; absent = the adapter runs on the bare base (its own harness prompt tells it apart). */
  loraPath?: string | undefined;
  scale?: number;
}

export interface LlamaEngineOptions {
  baseModelPath: string;
  adapters: readonly LlamaAdapterConfig[];
  /** CPU threads for llama.cpp; always explicit (its default is very slow on small machines). */
  threads: number;
  /**
   * Threads for a route hop that runs while no other route or answer does (default `threads`). A route hop
   * only prefills (its labels are scored, never decoded), and a prefill's batched matmuls scale with threads
   * where a decode does not: on 2 cores a route-sized prefill takes 113 ms on 1 thread and 59 ms on 2, while
   * SmolLM2 decodes slower on 2 (`npm run bench:base-format`). So the router's context may use more threads,
   * and llama.cpp's thread budget is raised to this only for such a hop's evaluation.
   */
  routeThreads?: number | undefined;
  /** KV capacity of one slot, in tokens. */
  contextSize: number;
  /** KV slots (sequences) per adapter context: how many conversations stay warm per adapter. */
  slotsPerAdapter: number;
  /**
   * Extra sequences per adapter context for summary hops (default: `slotsPerAdapter`, so each warm conversation
   * keeps a warm summary slot too); 0 runs summaries on the conversation's own slot, where the next turn's
   * answer waits for them. Each costs `contextSize` tokens of KV, see {@link AdapterRuntime}.
   */
  summarySlotsPerAdapter?: number | undefined;
  /** Requests that may wait for a busy slot of one adapter before `overloaded`. */
  maxWaitingPerAdapter: number;
  /**
   * Summaries pause between tokens while a route or answer runs on this engine (see hop-priority.ts); default
   * on, at most 2 s paused per summary.
   */
  hopPriority?: Partial<Omit<HopPriorityOptions, "now">> | undefined;
  gpu?: false | "auto";
  /**
   * Evaluates what every default router view starts with (the router's system line, the first user line's
   * opening) into each router slot at start, so a new conversation's first route hop prefills only its message
   * even on a slot no conversation used yet. Off by default: tests count a first hop's tokens from zero.
   */
  primeRouterSlots?: boolean | undefined;
  now: () => number;
  /** Content fingerprint of a model file (revision id). */
  fingerprintFile: (path: string) => Promise<string>;
}

/** One KV slot: a sequence of the adapter's context and what its tokens stand for. */
interface LlamaSlot {
  sequence: LlamaContextSequence;
  tokens: SlotTokens;
}

/**
 * A llama.cpp context and the adapter revisions whose slots are its sequences: one LoRA revision, or adapters on
 * the bare base (see {@link createLlamaEngine}). The summary slots exist because node-llama-cpp 3.21.1 cannot
 * copy KV between sequences (no `llama_memory_seq_cp` binding; a state round trip through a file would copy
 * the whole view every turn). So a summary is evaluated on a sequence of its own, bound to its conversation like
 * the answer slots: it reuses the prefix of that conversation's previous summary prompt and evaluates the rest
 * (the last turn's user line and answer, then the instruction) once more. The price: `contextSize` tokens of KV
 * per summary slot, and that re-evaluation, batched by llama.cpp with whatever the answer slots decode meanwhile.
 */
interface ContextGroup {
  context: LlamaContext;
  /** Made with a LoRA (one revision's alone), or for adapters on the bare base. */
  lora: boolean;
  /** Summary hops of every member, keyed by {@link summaryKey}; absent when the node has no summary slots. */
  summaries: SlotPool<LlamaSlot> | undefined;
  /** Members whose summary slots are in `summaries`: a member that leaves leaves its share for the next. */
  summaryShares: number;
  /** Revisions on this context, held or still finishing their requests. */
  members: Set<AdapterRuntime>;
}

interface AdapterRuntime {
  info: EngineAdapterInfo;
  group: ContextGroup;
  /** Routes and answers: the slot a conversation's next view reuses. */
  pool: SlotPool<LlamaSlot>;
  mainSlots: LlamaSlot[];
  /** Absolute path of the LoRA; absent on the bare base. */
  loraPath: string | undefined;
  scale: number;
  /** Aborted once the revision is unloaded: background work on its slots stops waiting. */
  retiring: AbortController;
}

/** A summary slot's binding: the conversation and the adapter revision whose summary it holds. */
const summaryKey = (name: AdapterName, conversationId: string): string => `${name}\n${conversationId}`;

/**
 * llama.cpp fixes a context's thread count when it is made, clamped to llama's thread budget then: a router
 * context is made under the wider budget (see `routeThreads`), and a lone route hop widens it while it runs.
 * Counted, so one ending does not narrow it under another.
 */
function createThreadBudget(llama: Llama, narrow: number, wide: number): () => () => void {
  let widened = 0;
  return () => {
    widened++;
    llama.maxThreads = wide;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      widened--;
      if (widened === 0) llama.maxThreads = narrow;
    };
  };
}

/** node-llama-cpp's error when llama.cpp refused the LoRA file itself (not the context around it). */
const LORA_INIT_FAILURE = /Failed to initialize LoRA adapter/;

/**
 * llama.cpp embedded through node-llama-cpp. LoRA is fixed per LlamaContext, so the base is loaded once and
 * each LoRA revision gets its own context whose sequences are the KV slots of that revision. Adapters without a
 * LoRA share one context instead: node-llama-cpp batches the evaluations of one context's sequences that run at
 * once into one llama.cpp decode, so on a bare base 16 hops spread over five adapters decode as one batch of 16,
 * not five small batches taking turns for the threads (measured in `npm run bench:concurrency`).
 *
 * Their summary slots form one pool too. A summary is a long decode (up to 192 tokens) right after every answer,
 * and the answers of a busy node mostly go to one or two specialists: with a pool per adapter, 16 summaries for
 * one specialist with 4 summary slots decoded 4 at a time while the other 16 slots idled, and the 12 waiting
 * held node admission that routes and answers then queued for (bench:concurrency at 16, 2 turns per client).
 * Answer slots stay per adapter: they are what the heartbeat reports and the edge places conversations by.
 *
 * Adapters load and unload while the engine runs. The shared context is sized at start for the bare-base
 * adapters configured then: llama.cpp fixes a context's sequence count and KV size when it is made, so it cannot
 * grow. A bare-base label loaded later takes the room one unloaded from it left, or else gets a context of its
 * own (its hops then batch apart from the shared ones). A context is disposed when its last revision leaves,
 * and a LoRA's weights are freed when no context uses the file any more (release-lora.ts).
 */
export async function createLlamaEngine(options: LlamaEngineOptions): Promise<Engine> {
  const routeThreads = Math.max(options.threads, options.routeThreads ?? options.threads);
  const llama: Llama = await getLlama({
    gpu: options.gpu ?? false,
    build: "never",
    maxThreads: options.threads,
    logLevel: LlamaLogLevel.error,
  });
  const model: LlamaModel = await llama.loadModel({ modelPath: options.baseModelPath });
  const baseRevision = await options.fingerprintFile(options.baseModelPath);
  const baseFacts = describeGgufFile(model.fileInfo);
  const servedModel = describeServedModel(model, options.contextSize);
  const widenThreads = createThreadBudget(llama, options.threads, routeThreads);
  const held = new HeldAdapters<AdapterRuntime>();
  const groups = new Set<ContextGroup>();
  const failedAdapters: Array<{ id: AdapterId; reason: string }> = [];
  const serially = createSerialQueue();
  const closing = new AbortController();
  const summarySlots = options.summarySlotsPerAdapter ?? options.slotsPerAdapter;
  const sequencesPerAdapter = options.slotsPerAdapter + summarySlots;
  const pooled = { maxWaiting: options.maxWaitingPerAdapter };

  const slots = (context: LlamaContext, count: number): LlamaSlot[] =>
    Array.from({ length: count }, () => ({ sequence: context.getSequence(), tokens: new SlotTokens() }));

  /** A context for `members` adapters' slots: each LoRA revision alone, bare-base adapters together. */
  const createGroup = async (
    members: number,
    lora?: { filePath: string; scale: number },
    ideal = options.threads,
  ): Promise<ContextGroup> => {
    const context = await model.createContext({
      contextSize: options.contextSize,
      sequences: members * sequencesPerAdapter,
      // node-llama-cpp splits llama.maxThreads between the contexts evaluating at once, each up to its ideal.
      threads: { ideal, min: 1 },
      // Its default retries with a smaller context on failure: the heartbeat would then promise more KV per
      // slot than the slots hold. A context that does not fit fails its load instead.
      failedCreationRemedy: false,
      ...(lora === undefined ? {} : { lora: { adapters: [lora] } }),
    });
    // One waiting allowance per adapter, as a pool of its own would have.
    const summaries =
      summarySlots > 0
        ? new SlotPool(slots(context, members * summarySlots), {
            maxWaiting: members * options.maxWaitingPerAdapter,
          })
        : undefined;
    return { context, lora: lora !== undefined, summaries, summaryShares: members, members: new Set() };
  };

  const releaseUnusedLora = async (loraPath: string | undefined): Promise<void> => {
    if (loraPath === undefined) return;
    for (const group of groups) for (const member of group.members) if (member.loraPath === loraPath) return;
    await releaseLora(model, loraPath);
  };

  const openLoraRevision = async (info: EngineAdapterInfo, loraPath: string, scale: number) => {
    const router = info.id === ROUTER_ADAPTER && routeThreads > options.threads;
    const narrow = router ? widenThreads() : undefined;
    try {
      return await createGroup(1, { filePath: loraPath, scale }, router ? routeThreads : options.threads);
    } catch (error) {
      // The context may have been made and the LoRA loaded before something failed: free what no one uses.
      await releaseUnusedLora(loraPath).catch(() => undefined);
      if (error instanceof Error && LORA_INIT_FAILURE.test(error.message)) {
        throw new BadRequestError(`llama.cpp refused LoRA ${loraPath}: ${error.message}`, { cause: error });
      }
      throw new EngineFailureError(`no context for ${info.name}: ${String(error)}`, { cause: error });
    } finally {
      narrow?.();
    }
  };

  /** The context a bare-base adapter's slots go in: room left in one, or one of its own. */
  const openBareGroup = async (): Promise<ContextGroup> => {
    const needs = (group: ContextGroup) =>
      options.slotsPerAdapter + (group.members.size < group.summaryShares ? 0 : summarySlots);
    for (const group of groups) {
      if (!group.lora && group.context.sequencesLeft >= needs(group)) return group;
    }
    try {
      return await createGroup(1);
    } catch (error) {
      throw new EngineFailureError(`no context for an adapter on the bare base: ${String(error)}`, {
        cause: error,
      });
    }
  };

  const load = async (request: EngineLoadAdapterRequest): Promise<EngineAdapterInfo> => {
    if (closing.signal.aborted) throw new EngineFailureError("engine is closed");
    const { label, scale } = readLoadRequest(request);
    const loraPath = request.path === undefined ? undefined : resolvePath(request.path);
    const revision =
      loraPath === undefined
        ? baseRevision
        : await options.fingerprintFile(loraPath).catch((error: unknown) => {
            throw new BadRequestError(`LoRA ${loraPath} cannot be read: ${String(error)}`, { cause: error });
          });
    const info: EngineAdapterInfo = {
      id: label,
      name: formatAdapterName(label, revision),
      revision,
      lora: loraPath !== undefined,
    };
    const holding = held.get(info.name);
    if (holding) return reloadHeld(holding.info, holding.scale, scale);
    if (loraPath !== undefined) await checkLoraFile(loraPath, baseFacts);
    const group =
      loraPath === undefined ? await openBareGroup() : await openLoraRevision(info, loraPath, scale);
    const joinsShare = group.members.size < group.summaryShares;
    const mainSlots = slots(group.context, options.slotsPerAdapter);
    if (!joinsShare && group.summaries) {
      group.summaries.grow(slots(group.context, summarySlots), options.maxWaitingPerAdapter);
      group.summaryShares++;
    }
    const runtime: AdapterRuntime = {
      info,
      group,
      pool: new SlotPool(mainSlots, pooled),
      mainSlots,
      loraPath,
      scale,
      retiring: new AbortController(),
    };
    group.members.add(runtime);
    groups.add(group);
    if (info.id === ROUTER_ADAPTER && options.primeRouterSlots) {
      // Only a head start: a slot whose priming failed is planned from what it holds, as any other.
      await primeRouterSlots(model, servedModel, mainSlots).catch(() => undefined);
    }
    held.add(runtime);
    for (let i = failedAdapters.length - 1; i >= 0; i--) {
      if (failedAdapters[i]?.id === info.id) failedAdapters.splice(i, 1);
    }
    return info;
  };

  /** After its last request: the revision's slots go, and its context and LoRA once nothing else uses them. */
  const free = async (runtime: AdapterRuntime): Promise<void> => {
    const { group } = runtime;
    group.members.delete(runtime);
    if (group.members.size === 0) {
      groups.delete(group);
      await group.context.dispose();
    } else {
      await Promise.all(runtime.mainSlots.map((slot) => slot.sequence.dispose()));
    }
    await releaseUnusedLora(runtime.loraPath);
  };

  try {
    // The configured bare-base adapters' context first, sized for all of them; each LoRA's after it.
    const bare = options.adapters.filter((a) => a.loraPath === undefined).length;
    if (bare > 0) groups.add(await createGroup(bare));
    for (const adapter of options.adapters) {
      // A LoRA that does not load (corrupt, wrong base) takes only its adapter out, not the node: l0 failing
      // must show in the heartbeat and as typed route errors, never as routing by a base without its adapter.
      await serially(() => load({ label: adapter.id, path: adapter.loraPath, scale: adapter.scale })).catch(
        (error: unknown) => {
          if (adapter.loraPath === undefined) throw error;
          const reason = error instanceof Error ? error.message : String(error);
          failedAdapters.push({ id: adapter.id, reason: `LoRA ${basename(adapter.loraPath)}: ${reason}` });
        },
      );
    }
  } catch (error) {
    await Promise.allSettled([...groups].map((group) => group.context.dispose()));
    await model.dispose();
    throw error;
  }

  const grammarFor = createConstraintGrammars(llama);
  // One gate for the whole engine: every adapter context decodes on the same threads.
  const priority = new HopPriority({ ...DEFAULT_HOP_PRIORITY, ...options.hopPriority, now: options.now });
  /**
   * Extends a route slot's view by the label and the next user line's opening (see scoreChoicesOnSequence) as
   * background work: it waits, as a summary does, until no route or answer runs, since a forward pass beside the
   * turn's answer would slow the answer more than it spares the next route. If the conversation's next hop
   * queues for the slot before it starts, it is dropped: that hop prefills the same tokens in its own pass,
   * cheaper than a pass of their own first (each pass reads every weight once, ~15 ms here). So is it when the
   * revision is unloaded meanwhile. A failed extension only loses the reuse (the slot forgets its tokens).
   */
  const extendWhenIdle = async (
    slotKey: string,
    runtime: AdapterRuntime,
    extend: () => Promise<void>,
  ): Promise<void> => {
    // Not counted as a summary in the node's metrics (molmesh_summary_pauses_total and the rest).
    const idle = priority.beginBackground(slotKey, { counted: false });
    const stop = AbortSignal.any([closing.signal, runtime.retiring.signal]);
    try {
      await idle.pause(stop);
      if (!idle.hurried && !stop.aborted) await extend();
    } catch {
      // Closing or unloading, or llama.cpp failing on a few tokens: the next prompt is planned from the slot.
    } finally {
      idle.end();
    }
  };

  const runOnRevision = async (
    runtime: AdapterRuntime,
    request: EngineGenerateRequest,
    onExtending: (extending: Promise<void>) => void,
  ): Promise<EngineGenerateResult> => {
    const { name } = runtime.info;
    // A choice is scored exactly (no grammar); other constraints decode under their compiled grammar.
    const constraint = request.constraint;
    const grammar = constraint && constraint.type !== "choice" ? await grammarFor(constraint) : undefined;
    const queuedAt = options.now();
    const summaries = request.lane === "summary" ? runtime.group.summaries : undefined;
    // A summary paused on the slot this request waits for would hold it up: it stops pausing. So do the
    // summaries holding a pool's slots when every one of them is busy.
    const slotKey = `${name}\u0000${summaries ? "summary" : "main"}\u0000${request.conversationId}`;
    const pool = summaries ?? runtime.pool;
    priority.hurry(slotKey);
    if (pool.free === 0) priority.hurryPool(pool);
    const lease = await pool.acquire(
      summaries ? summaryKey(name, request.conversationId) : request.conversationId,
      request.signal,
    );
    const queueMs = options.now() - queuedAt;
    // Registered once the slot is held, so a latency hop waiting for a summary's slot never pauses that summary.
    const background =
      request.lane === "summary"
        ? priority.beginBackground(slotKey, { pool, maxDeferralMs: request.deferrableMs })
        : undefined;
    const endLatency = background ? undefined : priority.beginLatency();
    // Alone, a route may take the router context's extra threads (summaries pause meanwhile, see above).
    const narrow =
      constraint?.type === "choice" && priority.latencyActive === 1 && routeThreads > options.threads
        ? widenThreads()
        : undefined;
    let extending: Promise<void> | undefined;
    try {
      if (constraint?.type === "choice") {
        const scored = await scoreChoicesOnSequence({
          sequence: lease.slot.sequence,
          slotTokens: lease.slot.tokens,
          choices: constraint.choices,
          request,
          now: options.now,
        });
        const { afterChoice } = request;
        if (afterChoice) extending = extendWhenIdle(slotKey, runtime, () => scored.extendView(afterChoice));
        return { ...scored.result, queueMs };
      }
      const result = await generateOnSequence({
        sequence: lease.slot.sequence,
        slotTokens: lease.slot.tokens,
        grammar,
        request,
        now: options.now,
        pauseBetweenTokens: background && (() => background.pause(request.signal)),
      });
      return { ...result, queueMs };
    } finally {
      narrow?.();
      background?.end();
      endLatency?.();
      // The slot stays lent until the view is extended: nothing else may evaluate on it meanwhile.
      if (extending) {
        onExtending(extending);
        void extending.finally(() => lease.release());
      } else lease.release();
    }
  };

  return {
    kind: "llama.cpp",
    baseModel: {
      name: readFileMetadata(model).general?.name ?? basename(options.baseModelPath),
      revision: baseRevision,
    },
    servedModel,
    adapters: () => held.list().map((runtime) => runtime.info),
    resolveAdapter: (requested) => held.resolve(requested)?.info,
    failedAdapters,
    features: [
      "output:json_schema",
      "output:json_object",
      "output:tools",
      "output:tools-auto",
      "output:grammar",
    ],

    async generate(request: EngineGenerateRequest): Promise<EngineGenerateResult> {
      const claim = held.claim(request.adapter, "is not loaded on this node");
      let extending: Promise<void> | undefined;
      try {
        return await runOnRevision(claim.revision, request, (started) => {
          extending = started;
        });
      } finally {
        // An unload waits for the view extension too: it evaluates on the revision's slot.
        if (extending) void extending.finally(() => claim.release());
        else claim.release();
      }
    },

    loadAdapter: (request) => serially(() => load(request)),

    async unloadAdapter(name) {
      const runtime = held.retire(name);
      runtime.retiring.abort();
      await held.drained(runtime);
      await serially(() => free(runtime));
    },

    priority: () => priority.stats(),
    hurrySummaries: () => priority.hurrySummaries(),

    snapshot() {
      return held.list().map((r) => ({
        adapter: r.info.id,
        name: r.info.name,
        totalSlots: r.pool.total,
        freeSlots: r.pool.free,
        warmConversations: r.pool.warmConversations(),
        waiting: r.pool.waiting,
      }));
    },

    async close() {
      closing.abort();
      await Promise.allSettled([...groups].map((group) => group.context.dispose()));
      await model.dispose();
      await llama.dispose();
    },
  };
}

/**
 * The default harness's router view opening, evaluated into every router slot at once (node-llama-cpp batches
 * the sequences of one context into one decode). A node cannot copy KV between sequences (see above), and a
 * slot no conversation has used holds nothing: a new user's first route hop on a fresh node prefilled the
 * whole view (261 ms for 64 tokens against ~70 ms). A harness configured otherwise shares less of it; llama.cpp
 * reuses whatever prefix matches, so priming never costs a hop anything.
 */
async function primeRouterSlots(
  model: LlamaModel,
  served: ServedModel,
  slots: readonly LlamaSlot[],
): Promise<void> {
  if (served.contextTokens < MIN_DEFAULT_CONTEXT_TOKENS) return;
  const harness = buildDefaultHarness({ family: served.templateFamily, contextTokens: served.contextTokens });
  const tokens = tokenizeView(model, cutAtStableBoundary(renderRouterViewOpening(harness)));
  await Promise.all(slots.map((slot) => slot.sequence.evaluateWithoutGeneratingNewTokens(tokens)));
}
