/**
 * The `interim` summary wait: the line the other specialists' views get when the next user line comes before
 * the answered turn's summary, and what a compaction past that turn keeps of it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TimelineEvent, TimelineEventOf } from "../../workers/src/db/timeline-event.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import {
  DEFAULT_INTERIM_MAX_BYTES,
  findSpecialist,
  readSummaryWait,
} from "../../schema/harness/harness-settings.ts";
import {
  INTERIM_NOTE,
  renderInterimLine,
  renderSummaryLine,
} from "../../schema/harness/render-view-lines.ts";
import { cleanConversationText } from "../../schema/harness/utf8.ts";
import {
  createConversationViews,
  findView,
  type PendingContext,
  type ViewState,
} from "../../workers/src/views/conversation-views.ts";
import { applyEventToViews, buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import { PROPERTY_LIMITS } from "./property-limits.ts";
import {
  BOUNDED_HARNESS,
  LARGE_HARNESS,
  SMALL_FAMILY_HARNESSES,
  SMALL_INTERIM_HARNESS,
  isBytePrefix,
  listAdapters,
  snapshotTexts,
} from "./test-harnesses.ts";
import { timelineArb } from "./timeline-arbitrary.ts";

/** The interim line the other specialists' views should get for `answer`, under `harness`'s settings. */
function expectedInterimLine(harness: HarnessDocument, answer: TimelineEventOf<"answer">): string {
  const wait = readSummaryWait(harness);
  const maxBytes = wait.mode === "interim" ? (wait.interimMaxBytes ?? DEFAULT_INTERIM_MAX_BYTES) : 0;
  const viewMaxBytes = findSpecialist(harness, answer.adapter)?.summary.viewMaxBytes ?? 0;
  return renderInterimLine(
    harness,
    answer.adapter,
    cleanConversationText(answer.text),
    Math.min(maxBytes, viewMaxBytes),
  );
}

/** How many turns a user message opens in a specialist's view: its own, and one per earlier exchange. */
function countOpenedTurns(pending: PendingContext | undefined): number {
  let awaitingAnswer = false;
  let opened = 1;
  for (const message of pending?.messages ?? []) {
    if (message.role === "user" || !awaitingAnswer) opened += 1;
    awaitingAnswer = message.role === "user";
  }
  return opened;
}

/**
 * The compact forms that `after` (once a user message opened its turns) shows for the turns of `prior` that
 * its cut took, by turn id; null where the forms dropped next went too. The cut moves whole turns, oldest
 * first, and the drops take the oldest forms, so the forms line up once the opened turns that the cut took
 * too are counted.
 */
function readCutForms(prior: ViewState, after: ViewState, opened: number): Map<string, string | null> {
  const priorIds = new Set(prior.turns.map((turn) => turn.turnId));
  const afterIds = new Set(after.turns.map((turn) => turn.turnId));
  const cut = prior.turns.filter((turn) => !afterIds.has(turn.turnId));
  const openedCut = opened - after.turns.filter((turn) => !priorIds.has(turn.turnId)).length;
  const dropped = prior.compacted.length + cut.length + openedCut - after.compacted.length;
  expect(dropped).toBeGreaterThanOrEqual(0);
  return new Map(
    cut.map((turn, i) => {
      const at = prior.compacted.length + i - dropped;
      return [turn.turnId, at < 0 ? null : (after.compacted[at] ?? null)];
    }),
  );
}

describe.each([
  ["default", DEFAULT_HARNESS],
  ["small, 16-byte interim lines", SMALL_INTERIM_HARNESS],
  ["large", LARGE_HARNESS],
  ["default, bounded summary wait", BOUNDED_HARNESS],
  ...SMALL_FAMILY_HARNESSES,
])("summaries late for the next turn under the %s harness", (_name, harness) => {
  const interim = readSummaryWait(harness).mode === "interim";

  it(
    interim
      ? "leave an interim line at the other specialists' views' end, just before the next user line"
      : "leave no interim line: those views show nothing of the answer",
    () => {
      let checked = 0;
      fc.assert(
        fc.property(timelineArb(12), (events) => {
          let views = createConversationViews(harness);
          // The latest turn's answer, while neither its summary nor its summary's failure is in the timeline.
          let unsummarised: TimelineEventOf<"answer"> | undefined;
          for (const event of events) {
            const prior = views;
            const before = snapshotTexts(views, harness);
            views = applyEventToViews(views, event, harness);
            if (event.type === "answer" && views.turn?.answeredBy === event.adapter) unsummarised = event;
            if (
              (event.type === "summary" || event.type === "summary_failed") &&
              event.turnId === views.turn?.turnId
            )
              unsummarised = undefined;
            if (event.type !== "user_message") continue;
            const after = snapshotTexts(views, harness);
            const answered = unsummarised;
            listAdapters(harness).forEach((adapter, i) => {
              const added = isBytePrefix(before[i] ?? "", after[i] ?? "")
                ? (after[i] ?? "").slice((before[i] ?? "").length)
                : null;
              const getsLine =
                interim &&
                answered !== undefined &&
                adapter !== harness.router.adapter &&
                adapter !== answered.adapter;
              if (!getsLine) {
                // Client text never holds the note: only an interim line puts it there.
                if (added !== null) expect(added.includes(INTERIM_NOTE)).toBe(false);
                return;
              }
              const line = expectedInterimLine(harness, answered);
              checked += 1;
              // Where the user message compacted, the answered turn either went to its compact form or kept the line.
              const kept = findView(views, adapter).turns.find((t) => t.turnId === answered.turnId);
              if (kept) expect(kept.full.endsWith(line)).toBe(true);
              // Where the cut took it, its compact form ends with the line (unless the drops took that too).
              const form = kept
                ? null
                : readCutForms(
                    findView(prior, adapter),
                    findView(views, adapter),
                    countOpenedTurns(prior.pending),
                  ).get(answered.turnId);
              if (!kept) expect(form).not.toBeUndefined();
              if (form) expect(form.endsWith(line)).toBe(true);
              if (added === null) return;
              // Appended at the end: the view before the user message, the line, then the new turn. An old view
              // that is a byte-prefix of the new one does not mean nothing compacted: a cut past turns whose
              // compact forms equal their full text (the answered turn's is its user line and the interim
              // line) moves no byte, so the line starts what was added either way.
              if (kept || form) expect(added.startsWith(line)).toBe(true);
            });
            unsummarised = undefined;
          }
        }),
        { numRuns: 60, ...PROPERTY_LIMITS },
      );
      // The property must have met late summaries, or it proved nothing.
      if (interim) expect(checked).toBeGreaterThan(0);
    },
  );

  // The large harness never compacts.
  it.runIf(interim && harness !== LARGE_HARNESS)(
    "compact a turn with an interim line to that line or, where its summary landed before the cut, the summary",
    () => {
      const cuts = { interim: 0, summary: 0 };
      fc.assert(
        fc.property(timelineArb(12), (events) => {
          let views = createConversationViews(harness);
          let unsummarised: TimelineEventOf<"answer"> | undefined;
          // Per view and turn that got an interim line: its compact form then, the line, the summary line.
          const watched = new Map<string, { base: string; interim: string; summary?: string }>();
          for (const event of events) {
            const prior = views;
            views = applyEventToViews(views, event, harness);
            if (event.type === "answer" && views.turn?.answeredBy === event.adapter) unsummarised = event;
            if (event.type === "summary_failed" && event.turnId === views.turn?.turnId)
              unsummarised = undefined;
            if (event.type === "summary") {
              if (event.turnId === prior.turn?.turnId) unsummarised = undefined;
              const maxBytes = findSpecialist(harness, event.adapter)?.summary.viewMaxBytes ?? 0;
              const text = cleanConversationText(event.text);
              for (const view of prior.views) {
                const entry = watched.get(`${view.adapter}\n${event.turnId}`);
                // Only the first summary counts, and only while the turn is held in full.
                if (!entry || entry.summary !== undefined) continue;
                if (!view.turns.some((turn) => turn.turnId === event.turnId)) continue;
                entry.summary = renderSummaryLine(harness, event.adapter, text, maxBytes);
              }
            }
            if (event.type !== "user_message") continue;
            const answered = unsummarised;
            unsummarised = undefined;
            for (const view of prior.views) {
              const last = view.turns.at(-1);
              if (!answered || view.adapter === harness.router.adapter || view.adapter === answered.adapter)
                continue;
              if (last?.turnId !== answered.turnId) continue;
              const interimLine = expectedInterimLine(harness, answered);
              watched.set(`${view.adapter}\n${answered.turnId}`, {
                base: last.compact,
                interim: interimLine,
              });
            }
            for (const view of prior.views) {
              if (view.adapter === harness.router.adapter) continue;
              const forms = readCutForms(
                view,
                findView(views, view.adapter),
                countOpenedTurns(prior.pending),
              );
              for (const [turnId, form] of forms) {
                const entry = watched.get(`${view.adapter}\n${turnId}`);
                if (!entry || form === null) continue;
                cuts[entry.summary === undefined ? "interim" : "summary"] += 1;
                // One of the two, never both and never neither.
                expect(form).toBe(entry.base + (entry.summary ?? entry.interim));
              }
            }
          }
        }),
        { numRuns: 60, ...PROPERTY_LIMITS },
      );
      // Cuts that keep the interim line come in every run; a summary landing before the cut is rarer (see the
      // examples below).
      expect(cuts.interim).toBeGreaterThan(0);
    },
  );
});

describe("an answered turn whose summary is late for the next turn, under small interim views", () => {
  const harness = SMALL_INTERIM_HARNESS;
  const user = (turnId: string, text: string): TimelineEvent => ({
    type: "user_message",
    turnId,
    text,
    harnessHash: "sha256:test",
  });
  const answer: TimelineEventOf<"answer"> = {
    type: "answer",
    turnId: "t0",
    adapter: "chat",
    revision: "r1",
    text: "The answer in full.",
    finishReason: "stop",
    hop: {
      nodeId: "n",
      usage: { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens: 1 },
      nodeTimings: { queueMs: 0, prefillMs: 1, decodeMs: 1, totalMs: 2 },
      edgeTimings: { totalMs: 3 },
    },
  };
  const summary: TimelineEvent = {
    type: "summary",
    turnId: "t0",
    adapter: "chat",
    text: "Its summary.",
    hop: answer.hop,
  };
  const summaryLine = renderSummaryLine(harness, "chat", "Its summary.", 128);
  const interimLine = expectedInterimLine(harness, answer);
  // Earlier messages and a user line far past the room's keep-full share: the opening cuts every turn before.
  const large = (turnId: string): TimelineEvent[] => [
    {
      type: "context_messages",
      turnId,
      messages: [
        { role: "user", text: "x".repeat(2_000) },
        { role: "assistant", text: "y".repeat(2_000) },
        { role: "user", text: "w".repeat(2_000) },
      ],
    },
    user(turnId, "z".repeat(2_000)),
  ];
  const compactedText = (events: TimelineEvent[]) =>
    findView(buildConversationViews(events, harness), "coding").compacted.join("");

  it("keeps its interim line where the next user line cuts it at once, and the summary cannot replace it", () => {
    const text = compactedText([user("t0", "first"), answer, ...large("t1"), summary]);
    expect(text).toContain(interimLine);
    expect(text).not.toContain(summaryLine);
  });

  it("shows the summary instead where it landed before a later cut", () => {
    const text = compactedText([user("t0", "first"), answer, user("t1", "second"), summary, ...large("t2")]);
    expect(text).toContain(summaryLine);
    expect(text).not.toContain(interimLine);
  });
});
