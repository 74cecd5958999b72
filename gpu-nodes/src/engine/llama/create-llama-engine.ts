import { basename } from "node:path";
import {
  getLlama,
  LlamaLogLevel,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
} from "node-llama-cpp";
import {
  ROUTER_ADAPTER,
  UnknownAdapterError,
  type AdapterId,
  type ServedModel,
} from "../../../../schema/wire/v2/index.ts";
import {
  type Engine,
  type EngineAdapterInfo,
  type EngineGenerateRequest,
  type EngineGenerateResult,
} from "../engine.ts";
import { DEFAULT_HOP_PRIORITY, HopPriority, type HopPriorityOptions } from "../hop-priority.ts";
import { createConstraintGrammars } from "./constraint-grammars.ts";
import { generateOnSequence } from "./generate-on-sequence.ts";
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
 * The summary slots exist because node-llama-cpp 3.21.1 cannot copy KV between sequences (no
 * `llama_memory_seq_cp` binding; a state round trip through a file would copy the whole view every turn). So a
 * summary is evaluated on a sequence of its own, bound to its conversation like the answer slots: it reuses the
 * prefix of that conversation's previous summary prompt and evaluates the rest (the last turn's user line and
 * answer, then the instruction) once more. The price: `contextSize` tokens of KV per summary slot, and that
 * re-evaluation, batched by llama.cpp with whatever the answer slots decode meanwhile.
 */
interface AdapterRuntime {
  info: EngineAdapterInfo;
  /** Routes and answers: the slot a conversation's next view reuses. */
  pool: SlotPool<LlamaSlot>;
  /**
   * Summary hops, when the node has summary slots; else they share `pool`. Keyed by {@link summaryKey}: the
   * adapters on the bare base draw from one pool of all their summary slots (see {@link createLlamaEngine}).
   */
  summaries: SlotPool<LlamaSlot> | undefined;
}

/** A summary slot's binding: the conversation and the adapter whose summary it holds. */
const summaryKey = (adapter: AdapterId, conversationId: string): string => `${adapter}\n${conversationId}`;

/**
 * llama.cpp embedded through node-llama-cpp. LoRA is fixed per LlamaContext, so the base is loaded once and
 * each LoRA adapter gets its own context whose sequences are the KV slots of that adapter. Adapters without a
 * LoRA share one context instead: node-llama-cpp batches the evaluations of one context's sequences that run at
 * once into one llama.cpp decode, so on a bare base 16 hops spread over five adapters decode as one batch of 16,
 * not five small batches taking turns for the threads (measured in `npm run bench:concurrency`).
 *
 * Their summary slots form one pool too. A summary is a long decode (up to 192 tokens) right after every answer,
 * and the answers of a busy node mostly go to one or two specialists: with a pool per adapter, 16 summaries for
 * one specialist with 4 summary slots decoded 4 at a time while the other 16 slots idled, and the 12 waiting
 * held node admission that routes and answers then queued for (bench:concurrency at 16, 2 turns per client).
 * Answer slots stay per adapter: they are what the heartbeat reports and the edge places conversations by.
 */
export async function createLlamaEngine(options: LlamaEngineOptions): Promise<Engine> {
  const routeThreads = Math.max(options.threads, options.routeThreads ?? options.threads);
  const llama: Llama = await getLlama({
    gpu: options.gpu ?? false,
    build: "never",
    // A context's ideal thread count is clamped to this budget when it is made: the router's context must be
    // made under the wider one. The budget drops to `threads` once the contexts exist (below).
    maxThreads: routeThreads,
    logLevel: LlamaLogLevel.error,
  });
  const model: LlamaModel = await llama.loadModel({ modelPath: options.baseModelPath });
  const baseRevision = await options.fingerprintFile(options.baseModelPath);
  const runtimes = new Map<AdapterId, AdapterRuntime>();
  const contexts: LlamaContext[] = [];
  const failedAdapters: Array<{ id: AdapterId; reason: string }> = [];
  const routerSlots: LlamaSlot[] = [];
  const summarySlots = options.summarySlotsPerAdapter ?? options.slotsPerAdapter;
  const sequencesPerAdapter = options.slotsPerAdapter + summarySlots;
  const pooled = { maxWaiting: options.maxWaitingPerAdapter };
  const createContext = (
    sequences: number,
    lora?: { filePath: string; scale: number },
    ideal = options.threads,
  ) =>
    model.createContext({
      contextSize: options.contextSize,
      sequences,
      // node-llama-cpp splits llama.maxThreads between the contexts evaluating at once, each up to its ideal.
      threads: { ideal, min: 1 },
      ...(lora === undefined ? {} : { lora: { adapters: [lora] } }),
    });
  try {
    const bare = options.adapters.filter((a) => a.loraPath === undefined);
    const shared = bare.length > 0 ? await createContext(bare.length * sequencesPerAdapter) : undefined;
    if (shared) contexts.push(shared);
    const slots = (context: LlamaContext, count: number): LlamaSlot[] =>
      Array.from({ length: count }, () => ({ sequence: context.getSequence(), tokens: new SlotTokens() }));
    const mainSlots = (id: AdapterId, context: LlamaContext): LlamaSlot[] => {
      const made = slots(context, options.slotsPerAdapter);
      if (id === ROUTER_ADAPTER) routerSlots.push(...made);
      return made;
    };
    // One waiting allowance per adapter, as a pool of its own would have.
    const sharedSummaries =
      shared && summarySlots > 0
        ? new SlotPool(slots(shared, bare.length * summarySlots), {
            maxWaiting: bare.length * options.maxWaitingPerAdapter,
          })
        : undefined;
    for (const adapter of options.adapters) {
      // A LoRA that does not load (corrupt, wrong base) takes only its adapter out, not the node: l0 failing
      // must show in the heartbeat and as typed route errors, never as routing by a base without its adapter.
      const context =
        adapter.loraPath === undefined
          ? shared
          : await createContext(
              sequencesPerAdapter,
              { filePath: adapter.loraPath, scale: adapter.scale ?? 1 },
              adapter.id === ROUTER_ADAPTER ? routeThreads : options.threads,
            )
              .then((created) => {
                contexts.push(created);
                return created;
              })
              .catch((error: unknown) => {
                failedAdapters.push({
                  id: adapter.id,
                  reason: `LoRA ${basename(adapter.loraPath as string)}: ${String(error)}`,
                });
                return undefined;
              });
      if (context === undefined) continue;
      runtimes.set(adapter.id, {
        info: {
          id: adapter.id,
          revision: adapter.loraPath ? await options.fingerprintFile(adapter.loraPath) : baseRevision,
          lora: adapter.loraPath !== undefined,
        },
        pool: new SlotPool(mainSlots(adapter.id, context), pooled),
        summaries:
          context === shared
            ? sharedSummaries
            : summarySlots > 0
              ? new SlotPool(slots(context, summarySlots), pooled)
              : undefined,
      });
    }
  } catch (error) {
    await Promise.allSettled(contexts.map((c) => c.dispose()));
    await model.dispose();
    throw error;
  }

  const servedModel = describeServedModel(model, options.contextSize);
  if (options.primeRouterSlots && routerSlots.length > 0) {
    // Only a head start: a slot whose priming failed is planned from what it holds, as any other.
    await primeRouterSlots(model, servedModel, routerSlots).catch(() => undefined);
  }
  llama.maxThreads = options.threads;
  const grammarFor = createConstraintGrammars(llama);
  // One gate for the whole engine: every adapter context decodes on the same threads.
  const priority = new HopPriority({ ...DEFAULT_HOP_PRIORITY, ...options.hopPriority, now: options.now });
  const closing = new AbortController();
  /**
   * Extends a route slot's view by the label and the next user line's opening (see scoreChoicesOnSequence) as
   * background work: it waits, as a summary does, until no route or answer runs, since a forward pass beside the
   * turn's answer would slow the answer more than it spares the next route. If the conversation's next hop
   * queues for the slot before it starts, it is dropped: that hop prefills the same tokens in its own pass,
   * cheaper than a pass of their own first (each pass reads every weight once, ~15 ms here). A failed extension
   * only loses the reuse (the slot forgets its tokens).
   */
  const extendWhenIdle = async (slotKey: string, extend: () => Promise<void>): Promise<void> => {
    // Not counted as a summary in the node's metrics (molmesh_summary_pauses_total and the rest).
    const idle = priority.beginBackground(slotKey, { counted: false });
    try {
      await idle.pause(closing.signal);
      if (!idle.hurried && !closing.signal.aborted) await extend();
    } catch {
      // Closing, or llama.cpp failing on a few tokens: the next prompt is planned from what the slot holds.
    } finally {
      idle.end();
    }
  };

  return {
    kind: "llama.cpp",
    baseModel: {
      name: readFileMetadata(model).general?.name ?? basename(options.baseModelPath),
      revision: baseRevision,
    },
    servedModel,
    adapters: [...runtimes.values()].map((r) => r.info),
    failedAdapters,
    features: [
      "output:json_schema",
      "output:json_object",
      "output:tools",
      "output:tools-auto",
      "output:grammar",
    ],

    async generate(request: EngineGenerateRequest): Promise<EngineGenerateResult> {
      const runtime = runtimes.get(request.adapter);
      if (!runtime) throw new UnknownAdapterError(`adapter "${request.adapter}" is not loaded on this node`);
      // A choice is scored exactly (no grammar); other constraints decode under their compiled grammar.
      const constraint = request.constraint;
      const grammar = constraint && constraint.type !== "choice" ? await grammarFor(constraint) : undefined;
      const queuedAt = options.now();
      const summaries = request.lane === "summary" ? runtime.summaries : undefined;
      // A summary paused on the slot this request waits for would hold it up: it stops pausing. So do the
      // summaries holding a pool's slots when every one of them is busy.
      const slotKey = `${request.adapter}\u0000${summaries ? "summary" : "main"}\u0000${request.conversationId}`;
      const pool = summaries ?? runtime.pool;
      priority.hurry(slotKey);
      if (pool.free === 0) priority.hurryPool(pool);
      const lease = await pool.acquire(
        summaries ? summaryKey(request.adapter, request.conversationId) : request.conversationId,
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
      const widen =
        constraint?.type === "choice" && priority.latencyActive === 1 && routeThreads > options.threads;
      if (widen) llama.maxThreads = routeThreads;
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
          if (afterChoice) extending = extendWhenIdle(slotKey, () => scored.extendView(afterChoice));
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
        if (widen) llama.maxThreads = options.threads;
        background?.end();
        endLatency?.();
        // The slot stays lent until the view is extended: nothing else may evaluate on it meanwhile.
        if (extending) void extending.finally(() => lease.release());
        else lease.release();
      }
    },

    priority: () => priority.stats(),
    hurrySummaries: () => priority.hurrySummaries(),

    snapshot() {
      return [...runtimes.values()].map((r) => ({
        adapter: r.info.id,
        totalSlots: r.pool.total,
        freeSlots: r.pool.free,
        warmConversations: r.pool.warmConversations(),
        waiting: r.pool.waiting,
      }));
    },

    async close() {
      closing.abort();
      await Promise.allSettled(contexts.map((c) => c.dispose()));
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
