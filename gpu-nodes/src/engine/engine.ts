import type { SubsetSchema } from "../../../schema/tools/json-schema-subset.ts";
import type {
  AdapterId,
  FinishReason,
  NodeFeature,
  ServedModel,
  Usage,
} from "../../../schema/wire/v2/index.ts";
import type { AdapterName } from "../../../schema/wire/v2/adapter-name.ts";
import type { HopPriorityStats } from "./hop-priority.ts";

/**
 * Output constraint; each engine compiles it to its own mechanism (GBNF, `structured_outputs`, `json_schema`).
 * `tools` constrains the text to the tool-call language of schema/tools/tool-call-text.ts: with `auto`, plain
 * text or the marker and a call matching `callSchema`; with `required`, the marker and a call. An engine that
 * cannot honour a constraint throws `bad_request` (the edge should have read the node's `features`).
 */
export type EngineConstraint =
  | { type: "choice"; choices: readonly string[] }
  | { type: "json_schema"; schema: SubsetSchema }
  | { type: "json_object" }
  /** `textSchema`: under `auto`, an answer that is not a call is JSON valid under it (a format with tools). */
  | { type: "tools"; callSchema: SubsetSchema; mode: "auto" | "required"; textSchema?: SubsetSchema }
  /** A GBNF grammar as the request sent it (root rule `root`); for engines listing `output:grammar`. */
  | { type: "grammar"; gbnf: string };

const ESCAPES: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const FIRST_PRINTABLE = 0x20;
const DELETE = 0x7f;

function escapeGbnfChar(char: string): string {
  const named = ESCAPES[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  // Raw control bytes would end or corrupt the literal; GBNF reads \xHH.
  if (code < FIRST_PRINTABLE || code === DELETE) return `\\x${code.toString(16).padStart(2, "0")}`;
  return char;
}

/** The GBNF form of a choice constraint (llama.cpp, llama-server): accepts exactly one of `choices`: `root ::= "a" | "b"`. */
export function buildChoiceGrammar(choices: readonly string[]): string {
  if (choices.length === 0) throw new RangeError("a choice constraint needs at least one choice");
  const literals = choices.map((choice) => `"${Array.from(choice, escapeGbnfChar).join("")}"`);
  return `root ::= ${literals.join(" | ")}`;
}

export interface EngineGenerateRequest {
  /**
   * A label (`chat`: the label's default revision, the oldest one held) or a versioned name (`chat@0123abcd…`:
   * that revision, or `unknown_adapter`), see held-adapters.ts.
   */
  adapter: AdapterName;
  /** KV slot key: the engine keeps (conversationId, adapter revision) warm so the next view reuses its prefix. */
  conversationId: string;
  /**
   * Whose request this is. The HTTP engines keep tenants' cached prompts apart by it (vLLM `cache_salt`) or
   * choose slots with it (llama-server); absent on a request that names no tenant.
   */
  tenantId?: string | undefined;
  /**
   * The exact prompt (the adapter's view); engines apply no chat template on top. Special tokens the
   * harness templates inserted sit between the sentinels of schema/harness/chat-templates.ts.
   */
  prompt: string;
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topP: number;
  topK: number;
  seed?: number | undefined;
  stop: readonly string[];
  constraint?: EngineConstraint;
  /**
   * Under a choice constraint: the text every later prompt of the conversation has right after the chosen
   * choice. An engine with KV slots may evaluate choice + this into the slot after answering, so the next
   * prompt prefills only what is new; others ignore it.
   */
  afterChoice?: string | undefined;
  /**
   * Aborting stops decoding promptly. When `signal.reason` is a MolWireError (cancelled, deadline_exceeded)
   * the engine rejects with that same error.
   */
  signal: AbortSignal;
  onTextDelta?: (delta: string) => void;
  /**
   * `"summary"`: the summary hop, which runs after the answer while the conversation's next turn may already
   * be answering on the same adapter. An engine with KV slots runs it on a slot of its own, so the next answer
   * never waits for it; others ignore it.
   */
  lane?: "summary";
  /**
   * For the summary lane: the most time, in all, the engine may hold the generation back for latency hops
   * (hop-priority.ts), so that it still ends before its hop's deadline. Absent: the engine's own bound.
   */
  deferrableMs?: number | undefined;
}

export interface EngineGenerateResult {
  text: string;
  finishReason: FinishReason;
  usage: Usage;
  /** Time waiting for the (conversation, adapter) slot inside the engine. */
  queueMs: number;
  /** From the start of evaluation to the first generated token. */
  prefillMs: number;
  /** From the first generated token to the end. */
  decodeMs: number;
  /** Under a choice constraint, each choice's probability (summing to 1), where the engine exposes them. */
  choiceProbabilities?: Record<string, number>;
}

export interface EngineAdapterInfo {
  /** The label (l0, chat, …). */
  id: AdapterId;
  /** `label@<rev hex>` (schema/wire/v2/adapter-name.ts): what KV slots, snapshots and heartbeats key on. */
  name: AdapterName;
  /** Content fingerprint of the LoRA (or of the base, for an adapter on the bare base). */
  revision: string;
  lora: boolean;
}

export interface EngineLoadAdapterRequest {
  label: AdapterId;
  /**
   * The LoRA: a GGUF on this machine for llama.cpp; for vLLM and llama-server the path as that server sees it.
   * Absent: the label runs on the bare base.
   */
  path?: string | undefined;
  /** LoRA scale (default 1); vLLM has none. */
  scale?: number | undefined;
}

export interface EngineAdapterSlots {
  /** The label. */
  adapter: AdapterId;
  /** The revision these slots belong to. */
  name: AdapterName;
  totalSlots: number;
  freeSlots: number;
  /** Conversations whose KV for this adapter is resident, most recently used first. */
  warmConversations: string[];
  /** Requests waiting for a busy slot of this adapter. */
  waiting: number;
}

/**
 * What a GPU node drives. The node service never knows which engine is behind it: llama.cpp embedded,
 * vLLM or llama-server over HTTP. Errors are thrown as MolWireError subclasses (unknown_adapter,
 * context_length_exceeded, overloaded, cancelled, deadline_exceeded, engine_failure).
 */
export interface Engine {
  /** e.g. "llama.cpp", "vllm", "llama-server". */
  readonly kind: string;
  readonly baseModel: { name: string; revision: string };
  /** The chat format, context and tokenizer the edge renders views for; absent: the edge's default harness. */
  readonly servedModel?: ServedModel;
  /** The revisions held now, oldest load first (each label's first is its default). */
  adapters(): EngineAdapterInfo[];
  /** The revision a request for `requested` (label or versioned name) runs on now; undefined: it is refused. */
  resolveAdapter(requested: string): EngineAdapterInfo | undefined;
  /**
   * Configured adapters that failed to load at start: the node serves without them and says so in its
   * heartbeat. Live: a later successful {@link loadAdapter} of the label takes its entry out.
   */
  readonly failedAdapters?: ReadonlyArray<{ id: AdapterId; reason: string }>;
  /** Constraints beyond `choice` this engine honours; absent = none. Published in the node's heartbeat. */
  readonly features?: readonly NodeFeature[];
  generate(request: EngineGenerateRequest): Promise<EngineGenerateResult>;
  /**
   * Holds a revision of `label` from now on; loading what is held already (same label, same content) returns
   * the held revision. A failure leaves the engine as it was and throws `bad_request` when the file is at fault
   * (missing, not a LoRA, made for another base) and `engine_failure` when the engine is (out of memory,
   * unreachable, closed).
   */
  loadAdapter(request: EngineLoadAdapterRequest): Promise<EngineAdapterInfo>;
  /**
   * Lets go of the revision `name` (versioned; a prefix of its hex is enough): new requests for it are refused
   * with `unknown_adapter` at once, requests already running on it finish, then its memory is freed.
   */
  unloadAdapter(name: string): Promise<void>;
  /** One entry per revision held. */
  snapshot(): EngineAdapterSlots[];
  /**
   * How summaries yielded to latency hops (gpu-nodes/src/engine/hop-priority.ts); absent: the engine does not
   * prioritise. The HTTP engines do not: vLLM and llama-server batch requests on their own schedulers.
   */
  priority?(): HopPriorityStats;
  /** A hop waits for node admission that summaries hold: the engine stops holding any summary back. */
  hurrySummaries?(): void;
  close(): Promise<void>;
}
