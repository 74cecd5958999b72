import fc from "fast-check";
import type { HopFacts, TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import { SPECIALIST_LABELS, type SpecialistLabel } from "../../schema/wire/v2/index.ts";

/** One turn of a generated timeline, before it becomes events. */
export interface TurnSpec {
  text: string;
  source: "router" | "forced" | "fallback";
  label: SpecialistLabel;
  outcome: "answer" | "turn_failed" | "turn_cancelled" | "route_failed";
  answer: string;
  /** `late`: the summary lands after the next turn's user message (the next turn did not wait for it). */
  summary: "summary" | "late" | "summary_failed" | "none";
  summaryText: string;
  /** Issue 14: instructions and an item array's earlier messages before the user message, tombstones after. */
  instructions?: string | null | undefined;
  context?: Array<{ role: "user" | "assistant"; text: string }>;
  tombstone?: "response" | "item" | "none";
  /** A user's feedback on the previous turn, arriving while this one runs (views ignore it). */
  feedback?: "positive" | "negative" | "none";
  /** A step program's check that rejects the answer (its note shown to the specialist) and a repair's revision. */
  repair?: { note: string; revised: string } | null | undefined;
  /** The turn runs under another harness than the previous one: `harness_changed` opens it (views ignore it). */
  harnessChanged?: boolean | undefined;
}

const HOP: HopFacts = {
  nodeId: "node-1",
  usage: { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens: 1 },
  nodeTimings: { queueMs: 0, prefillMs: 1, decodeMs: 1, totalMs: 2 },
  edgeTimings: { totalMs: 3 },
};

/** Text (lengths spread up to `maxLength`) that stresses the renderer: astral code points, lone surrogates, newlines, `$&` and template braces. */
export function textArb(maxLength: number): fc.Arbitrary<string> {
  const tricky = fc.constantFrom(
    "\uD83D",
    "\uDE00",
    "😀",
    "é",
    "\n",
    "$&",
    "{text}",
    "{label}",
    "user: ",
    "…",
    "\uE000<|im_start|>\uE001system\n",
    "<|im_end|>",
    "\uE001",
    "a",
  );
  return fc.oneof(
    fc.string({ unit: "binary", maxLength, size: "max" }),
    fc.string({ unit: tricky, maxLength: Math.ceil(maxLength / 2), size: "max" }),
    fc.string({ unit: "grapheme-ascii", maxLength, size: "max" }),
  );
}

export function turnSpecArb(maxText = 120): fc.Arbitrary<TurnSpec> {
  return fc.record({
    text: textArb(maxText),
    source: fc.constantFrom("router", "forced", "fallback"),
    label: fc.constantFrom(...SPECIALIST_LABELS),
    outcome: fc.constantFrom("answer", "answer", "answer", "turn_failed", "turn_cancelled", "route_failed"),
    answer: textArb(maxText * 2),
    summary: fc.constantFrom("summary", "summary", "late", "summary_failed", "none"),
    summaryText: textArb(maxText),
    instructions: fc.option(textArb(maxText), { freq: 3 }),
    context: fc.array(
      fc.record({ role: fc.constantFrom("user" as const, "assistant" as const), text: textArb(maxText) }),
      { maxLength: 3 },
    ),
    tombstone: fc.constantFrom("none", "none", "none", "response", "item"),
    feedback: fc.constantFrom("none", "none", "none", "positive", "negative"),
    repair: fc.option(fc.record({ note: textArb(maxText), revised: textArb(maxText * 2) }), { freq: 4 }),
    harnessChanged: fc.constantFrom(false, false, false, true),
  });
}

/** A turn's events in the timeline's order: user_message, route_decision, answer | failure, summary. */
export function buildTurnEvents(spec: TurnSpec, index: number): TimelineEvent[] {
  const turnId = `turn-${index}`;
  const events: TimelineEvent[] = [];
  if (index > 0 && spec.harnessChanged === true)
    events.push({ type: "harness_changed", turnId, from: "sha256:before", to: "sha256:test" });
  if (spec.instructions !== null && spec.instructions !== undefined)
    events.push({ type: "instructions", turnId, text: spec.instructions });
  if (spec.context && spec.context.length > 0)
    events.push({ type: "context_messages", turnId, messages: spec.context });
  events.push({ type: "user_message", turnId, text: spec.text, harnessHash: "sha256:test" });
  // A tombstone for the previous turn, arriving while this one runs.
  if (index > 0 && spec.tombstone === "response")
    events.push({ type: "response_deleted", turnId: `turn-${index - 1}` });
  if (index > 0 && spec.tombstone === "item")
    events.push({ type: "item_deleted", turnId: `turn-${index - 1}`, itemId: `msg_${index - 1}u` });
  if (index > 0 && (spec.feedback === "positive" || spec.feedback === "negative"))
    events.push({ type: "feedback", turnId: `turn-${index - 1}`, rating: spec.feedback, comment: "seen" });
  if (spec.outcome === "route_failed") {
    events.push({ type: "turn_failed", turnId, hop: "route", code: "deadline_exceeded", message: "late" });
    return events;
  }
  events.push({ type: "route_decision", turnId, label: spec.label, source: spec.source });
  if (spec.outcome === "turn_failed") {
    events.push({ type: "turn_failed", turnId, hop: "answer", code: "engine_failure", message: "boom" });
  } else if (spec.outcome === "turn_cancelled") {
    events.push({ type: "turn_cancelled", turnId, reason: "client went away", partialChars: 3 });
  } else {
    const adapter = spec.label;
    events.push({
      type: "answer",
      turnId,
      adapter,
      revision: "r1",
      text: spec.answer,
      finishReason: "stop",
      hop: HOP,
    });
    if (spec.repair) {
      const check = { turnId, step: "check", kind: "check" } as const;
      events.push({ type: "step", ...check, verdict: "fail", note: spec.repair.note.slice(0, 2048) });
      events.push({
        type: "answer",
        turnId,
        adapter,
        revision: "r1",
        text: spec.repair.revised,
        finishReason: "stop",
        hop: HOP,
        revises: true,
      });
      events.push({ type: "step", ...check, verdict: "pass" });
    }
    if (spec.summary === "summary" || spec.summary === "late")
      events.push({ type: "summary", turnId, adapter, text: spec.summaryText, hop: HOP });
    if (spec.summary === "summary_failed") {
      events.push({ type: "summary_failed", turnId, adapter, code: "overloaded", message: "busy" });
    }
  }
  return events;
}

export function timelineArb(maxTurns: number, maxText = 120): fc.Arbitrary<TimelineEvent[]> {
  return (
    fc
      // size "max": lengths spread over the whole range, so views reach their budgets and compact.
      .array(turnSpecArb(maxText), { minLength: 1, maxLength: maxTurns, size: "max" })
      .map((turns) =>
        placeLateSummaries(
          turns.map((turn, index) => buildTurnEvents(turn, index)),
          turns,
        ),
      )
  );
}

/** Moves each `late` summary past the next turn's user message (and its route decision when it has one). */
function placeLateSummaries(perTurn: TimelineEvent[][], specs: readonly TurnSpec[]): TimelineEvent[] {
  const placed = perTurn.map((events) => [...events]);
  for (let i = 0; i < placed.length - 1; i++) {
    const events = placed[i] ?? [];
    const late = specs[i]?.summary === "late" ? events.findIndex((e) => e.type === "summary") : -1;
    if (late < 0) continue;
    const [summary] = events.splice(late, 1);
    const next = placed[i + 1] ?? [];
    if (summary) next.splice(Math.min(next.length, 1 + (i % 2)), 0, summary);
  }
  return placed.flat();
}
