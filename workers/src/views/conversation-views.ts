/** Format tag of the stored state; a change of shape or rendering gets a new one (and a rebuild). */
export const VIEWS_FORMAT = "molmesh.views.v1" as const;

/** One turn as one adapter's view shows it. */
export interface ViewTurn {
  turnId: string;
  /** The turn in full, as the view shows it now; it only grows at its end. */
  full: string;
  /** What the turn shrinks to when a compaction cuts past it. */
  compact: string;
  /** A summary line is already in `compact` (a second summary event is ignored). */
  summarised: boolean;
}

/** One adapter's view: `header + compacted.join("") + turns[].full.join("")`. */
export interface ViewState {
  adapter: string;
  /** The adapter's system line (plus, for chat completions, the client's system lines). */
  header: string;
  /** Compact forms of the turns before the cut, oldest first. */
  compacted: string[];
  /** The turns after the cut, in full, the one in progress last. */
  turns: ViewTurn[];
}

/** Where the latest turn stands, so out-of-order or repeated events change nothing. */
export interface TurnProgress {
  turnId: string;
  label: string | null;
  answeredBy: string | null;
  /** turn_failed or turn_cancelled arrived. */
  ended: boolean;
}

/**
 * Every adapter's view of one conversation: plain JSON (arrays, strings, booleans, null; no Maps, no
 * undefined), so the Durable Object can store it and a JSON round trip changes nothing.
 */
export interface ConversationViews {
  format: typeof VIEWS_FORMAT;
  turn: TurnProgress | null;
  /** The router's view first, then one per specialist in `router.labels` order. */
  views: ViewState[];
}
