import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import type { StoredTimelineEvent, TimelineEvent } from "../db/timeline-event.ts";
import {
  VIEWS_FORMAT,
  createConversationViews,
  type ConversationViews,
} from "../views/conversation-views.ts";
import { applyEventToViews } from "../views/views-reducer.ts";
import { renderAnswerPrompt, renderRoutePrompt, renderSummaryPrompt } from "../views/render-prompts.ts";
import type { ConversationStore } from "./conversation-store.ts";
import type { ViewTool } from "../../../schema/harness/tools-block.ts";
import type { Timeline } from "./timeline.ts";

/** Events read per page when views must be rebuilt (first load, or a new harness document). */
const REBUILD_PAGE_EVENTS = 500;
/**
 * The stored views are a cache of the timeline: written once this many events have landed since the last write,
 * not on every append (each write is the whole views state), so a load catches up on at most this many events.
 */
const SNAPSHOT_EVERY_EVENTS = 16;

/**
 * The timeline plus its per-adapter views, kept in step: every append updates the views incrementally and
 * stores them, so a turn's cost does not grow with the conversation's length. Views are rebuilt from the whole
 * timeline only when the harness document changed. Two instances may share a store (a turn's summary lands while
 * the next turn runs): each catches up on the other's events before it appends or renders.
 */
export class ConversationTimeline implements Timeline {
  readonly #store: ConversationStore;
  readonly #harness: HarnessDocument;
  readonly #harnessHash: string;
  #views: ConversationViews;
  #throughSeq: number;
  /** `throughSeq` of the stored views. */
  #snapshotSeq: number;
  readonly #recent: RecentEvents;
  readonly #turns = new TurnEvents();

  constructor(store: ConversationStore, harness: HarnessDocument, harnessHash: string) {
    this.#store = store;
    this.#harness = harness;
    this.#harnessHash = harnessHash;
    this.#recent = new RecentEvents(store);
    const snapshot = store.readViewSnapshot();
    // A snapshot from another harness document or another views format is rebuilt from the timeline.
    const current = (snapshot?.state as { format?: unknown } | undefined)?.format === VIEWS_FORMAT;
    if (snapshot && current && snapshot.harnessHash === harnessHash) {
      this.#views = snapshot.state as ConversationViews;
      this.#throughSeq = snapshot.throughSeq;
    } else {
      this.#views = createConversationViews(harness);
      this.#throughSeq = 0;
    }
    this.#snapshotSeq = this.#throughSeq;
    this.#catchUp();
  }

  /** The harness document the views are built under, and its hash. */
  get harness(): { document: HarnessDocument; hash: string } {
    return { document: this.#harness, hash: this.#harnessHash };
  }

  /** Whether this timeline may serve the next turn too: same harness, and its store not emptied under it. */
  serves(harnessHash: string): boolean {
    return harnessHash === this.#harnessHash && this.#store.lastSeq() >= this.#throughSeq;
  }

  append(...events: TimelineEvent[]): StoredTimelineEvent[] {
    this.#catchUp();
    const stored = this.#store.append(events);
    for (const event of stored) this.#apply(event);
    this.#throughSeq = stored.at(-1)?.seq ?? this.#throughSeq;
    this.#saveViews();
    return stored;
  }

  /**
   * A turn's events. The turn loop builds its record from them five times a turn (start, finish, outbox, summary,
   * charge), each a query and a row mapping; a turn read once is kept, and grown by the events that then pass
   * through this timeline (appended here, or caught up from another instance sharing the store).
   */
  readTurn(turnId: string): StoredTimelineEvent[] {
    this.#catchUp();
    // Emptied under us (the conversation was deleted): the store says what is left, nothing kept here.
    if (this.#store.lastSeq() < this.#throughSeq) this.#turns.clear();
    return this.#turns.read(turnId, this.#throughSeq, () => this.#store.readTurn(turnId));
  }

  routePrompt(next: readonly TimelineEvent[] = []): string {
    this.#catchUp();
    // The reducer is pure: applying `next` to the views in hand appends nothing to the stored ones.
    const views = next.reduce((v, event) => applyEventToViews(v, event, this.#harness), this.#views);
    return renderRoutePrompt(views, this.#harness);
  }

  answerPrompt(label: string): string {
    this.#catchUp();
    return renderAnswerPrompt(this.#views, label, this.#harness);
  }

  summaryPrompt(label: string): string {
    this.#catchUp();
    return renderSummaryPrompt(this.#views, label, this.#harness);
  }

  shownTools(): ViewTool[] | undefined {
    this.#catchUp();
    const last = this.#recent.latest("tools_changed");
    return last?.type === "tools_changed" ? last.tools : undefined;
  }

  /** The specialist that answered the most recent answered turn, if any. */
  lastAnsweredLabel(): string | undefined {
    this.#catchUp();
    const last = this.#recent.latest("answer");
    return last?.type === "answer" ? last.adapter : undefined;
  }

  /** The hash of the harness the conversation's latest turn ran under; undefined before its first turn. */
  lastHarnessHash(): string | undefined {
    this.#catchUp();
    const last = this.#recent.latest("user_message");
    return last?.type === "user_message" ? last.harnessHash : undefined;
  }

  /** The latest system instructions, if any turn gave some. */
  lastInstructions(): string | undefined {
    this.#catchUp();
    const last = this.#recent.latest("instructions");
    return last?.type === "instructions" ? last.text : undefined;
  }

  /**
   * The node that last served `adapter` in this conversation, read from the timeline: after an edge restart the
   * placement still knows where the KV is warm, so a restart loses nothing but this object's memory.
   */
  lastNodeFor(adapter: string): string | undefined {
    this.#catchUp();
    for (const event of this.#recent.placements) {
      if (event.type === "route_decision" && event.router && adapter === this.#harness.router.adapter) {
        return event.router.nodeId;
      }
      if ((event.type === "answer" || event.type === "summary") && event.adapter === adapter)
        return event.hop.nodeId;
    }
    return undefined;
  }

  #catchUp(): void {
    for (;;) {
      const page = this.#store.readEventsAfter(this.#throughSeq, REBUILD_PAGE_EVENTS);
      for (const event of page) this.#apply(event);
      if (page.length === 0) break;
      this.#throughSeq = page.at(-1)?.seq ?? this.#throughSeq;
    }
    this.#saveViews();
  }

  #apply(event: StoredTimelineEvent): void {
    this.#views = applyEventToViews(this.#views, event, this.#harness);
    this.#recent.see(event);
    this.#turns.see(event);
  }

  #saveViews(): void {
    if (this.#throughSeq - this.#snapshotSeq < SNAPSHOT_EVERY_EVENTS) return;
    this.#store.writeViewSnapshot({
      throughSeq: this.#throughSeq,
      harnessHash: this.#harnessHash,
      state: this.#views,
    });
    this.#snapshotSeq = this.#throughSeq;
  }
}

/**
 * Events of the types a turn asks for the latest of (the last answer, the tools shown, the instructions, the last
 * user message's harness).
 */
const LATEST_TYPES = ["tools_changed", "answer", "instructions", "user_message"] as const;
type LatestType = (typeof LATEST_TYPES)[number];
const PLACEMENT_TYPES = ["answer", "summary", "route_decision"] as const;
/** How many of the latest hops say where an adapter's KV is warm: an adapter idle longer is placed afresh. */
const PLACEMENT_LOOKBACK = 12;

/**
 * The latest events a turn asks about (placement, previous label, tools, instructions), read from the store once
 * and then kept as events pass through the timeline, instead of three or four queries a turn. `#seq` is how far
 * the store was read: an older event met again while catching up changes nothing.
 */
class RecentEvents {
  readonly #latest = new Map<LatestType, StoredTimelineEvent>();
  placements: StoredTimelineEvent[];
  #seq: number;

  constructor(store: ConversationStore) {
    this.#seq = store.lastSeq();
    for (const type of LATEST_TYPES) {
      const [last] = store.listEvents({ types: [type], order: "desc", limit: 1 });
      if (last) this.#latest.set(type, last);
    }
    this.placements = store.listEvents({
      types: [...PLACEMENT_TYPES],
      order: "desc",
      limit: PLACEMENT_LOOKBACK,
    });
  }

  latest(type: LatestType): StoredTimelineEvent | undefined {
    return this.#latest.get(type);
  }

  see(event: StoredTimelineEvent): void {
    if (event.seq <= this.#seq) return;
    this.#seq = event.seq;
    if ((LATEST_TYPES as readonly string[]).includes(event.type))
      this.#latest.set(event.type as LatestType, event);
    if ((PLACEMENT_TYPES as readonly string[]).includes(event.type))
      this.placements = [event, ...this.placements].slice(0, PLACEMENT_LOOKBACK);
  }
}

/** Turns whose events are kept: the running one and the one whose summary may still land. */
const KEPT_TURNS = 4;

/**
 * The events of the few turns read lately. An entry is the store's answer at `throughSeq`, then every event of
 * that turn the timeline applies after it: the timeline applies each stored event once it catches up, so an entry
 * stays what the store would say.
 */
class TurnEvents {
  readonly #kept = new Map<string, { events: StoredTimelineEvent[]; seq: number }>();

  read(turnId: string, throughSeq: number, load: () => StoredTimelineEvent[]): StoredTimelineEvent[] {
    let entry = this.#kept.get(turnId);
    if (!entry) {
      entry = { events: load(), seq: throughSeq };
      this.#kept.set(turnId, entry);
      if (this.#kept.size > KEPT_TURNS) this.#kept.delete(this.#kept.keys().next().value as string);
    }
    return [...entry.events];
  }

  see(event: StoredTimelineEvent): void {
    const entry = this.#kept.get(event.turnId);
    if (!entry || event.seq <= entry.seq) return;
    entry.events.push(event);
    entry.seq = event.seq;
  }

  clear(): void {
    this.#kept.clear();
  }
}

/** How far back a `function_call_output` may answer a call: the most recent answers of the conversation. */
const CALL_LOOKBACK_ANSWERS = 1000;

/** Whether a recent answer of this conversation made the call `callId` (a `function_call_output` answers one). */
export function hasToolCall(store: ConversationStore, callId: string): boolean {
  return store
    .listEvents({ types: ["answer"], order: "desc", limit: CALL_LOOKBACK_ANSWERS })
    .some((event) => event.type === "answer" && event.toolCalls?.some((call) => call.id === callId) === true);
}
