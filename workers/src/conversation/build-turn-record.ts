import type { StoredTimelineEvent, TimelineEventOf } from "../db/timeline-event.ts";
import { buildItemId } from "./item-id.ts";
import type { TurnMol, TurnRecord } from "./turn-record.ts";
import type { MolHarnessAdapter } from "../../../schema/api/mol.ts";

type Found = { [T in StoredTimelineEvent["type"]]?: Extract<StoredTimelineEvent, { type: T }> };

/** A turn as the API shows it, derived from that turn's events alone. */
export function buildTurnRecord(conversationId: string, events: readonly StoredTimelineEvent[]): TurnRecord {
  const found: Found = {};
  for (const event of events) (found as Record<string, StoredTimelineEvent>)[event.type] = event;
  const user = found.user_message;
  if (!user) throw new Error("a turn starts with its user message");
  const route = found.route_decision;
  const answer = found.answer;
  const failed = found.turn_failed;
  const cancelled = found.turn_cancelled;
  return {
    turnId: user.turnId,
    conversationId,
    createdAt: Math.floor(user.createdAt / 1000),
    status: answer ? "completed" : failed ? "failed" : cancelled ? "cancelled" : "in_progress",
    userItemId: buildItemId(user.turnId, "user"),
    assistantItemId: buildItemId(user.turnId, "assistant"),
    userText: user.text,
    ...(user.toolResults ? { toolResults: user.toolResults } : {}),
    answerText: answer?.toolCalls ? "" : (answer?.text ?? ""),
    ...(answer ? { finishReason: answer.finishReason } : {}),
    ...(answer?.toolCalls ? { toolCalls: answer.toolCalls } : {}),
    ...(failed ? { error: { code: failed.code, message: failed.message } } : {}),
    ...(cancelled ? { error: { code: "cancelled" as const, message: cancelled.reason } } : {}),
    mol: buildMol(user, route, answer, found, events),
    ...(user.response ? { response: user.response } : {}),
  };
}

function buildMol(
  user: TimelineEventOf<"user_message">,
  route: TimelineEventOf<"route_decision"> | undefined,
  answer: TimelineEventOf<"answer"> | undefined,
  found: Found,
  events: readonly StoredTimelineEvent[],
): TurnMol {
  const summary = found.summary;
  return {
    turnId: user.turnId,
    harnessHash: user.harnessHash,
    ...(user.harness
      ? { harness: { hash: user.harnessHash, ...user.harness, adapters: listHopAdapters(events) } }
      : {}),
    label: route?.label ?? "",
    adapter: answer?.adapter ?? route?.label ?? "",
    ...(answer ? { revision: answer.revision } : {}),
    source: route?.source ?? "router",
    ...(route?.fallback ? { fallback: route.fallback } : {}),
    ...(route?.router?.confidence === undefined
      ? {}
      : {
          route: {
            confidence: route.router.confidence,
            ...(route.router.lowConfidenceLabel === undefined
              ? {}
              : { lowConfidenceLabel: route.router.lowConfidenceLabel }),
          },
        }),
    nodes: definedOnly({
      route: route?.router?.nodeId,
      answer: answer?.hop.nodeId,
      summary: summary?.hop.nodeId,
    }),
    timings: definedOnly({
      routeMs: route?.router?.edgeTimings.totalMs,
      answerFirstTokenMs: answer?.hop.edgeTimings.firstTokenMs,
      answerTotalMs: answer?.hop.edgeTimings.totalMs,
      summaryMs: summary?.hop.edgeTimings.totalMs,
      routeNodeMs: route?.router?.nodeTimings.totalMs,
      answerNodeMs: answer?.hop.nodeTimings.totalMs,
      summaryNodeMs: summary?.hop.nodeTimings.totalMs,
      summaryWaitMs: route?.summaryWaitMs,
    }),
    placement: definedOnly({
      route: route?.router?.placement,
      answer: answer?.hop.placement,
      summary: summary?.hop.placement,
    }),
    usage: definedOnly({
      route: route?.router?.usage,
      answer: answer?.hop.usage,
      summary: summary?.hop.usage,
    }),
    ...(answer?.takeovers ? { takeovers: answer.takeovers } : {}),
    summary: summary
      ? { status: "ready", text: summary.text }
      : found.summary_failed
        ? { status: "failed" }
        : answer
          ? { status: "pending" }
          : { status: "none" },
    ...(found.genui_validation ? { genui: formatGenui(found.genui_validation) } : {}),
    // The latest feedback (a later one replaces an earlier one here; the timeline keeps both).
    ...(found.feedback ? { feedback: formatFeedback(found.feedback) } : {}),
  };
}

/**
 * Each hop the turn ran, in timeline order, with the adapter the harness asked for and the revision the node
 * served: the harness names adapters, and the same name may be served by another revision tomorrow, so a turn
 * keeps both. A route that did not reach the router (forced, or a fallback) ran no hop.
 */
function listHopAdapters(events: readonly StoredTimelineEvent[]): MolHarnessAdapter[] {
  const adapters: MolHarnessAdapter[] = [];
  for (const event of events) {
    if (event.type === "route_decision" && event.router?.adapter !== undefined)
      adapters.push({ hop: "route", adapter: event.router.adapter, revision: event.router.revision ?? null });
    if (event.type === "answer")
      adapters.push({ hop: "answer", adapter: event.adapter, revision: event.revision });
    if (event.type === "summary")
      adapters.push({ hop: "summary", adapter: event.adapter, revision: event.hop.revision ?? null });
  }
  return adapters;
}

function formatGenui(event: TimelineEventOf<"genui_validation">): NonNullable<TurnMol["genui"]> {
  const { status, findings, summary } = event;
  return {
    status,
    findings,
    summary,
    ...definedOnly({
      componentId: event.componentId,
      renderUrl: event.renderUrl,
      renderUrlExpiresAt: event.renderUrlExpiresAt,
    }),
  };
}

function formatFeedback(
  event: Extract<StoredTimelineEvent, { type: "feedback" }>,
): NonNullable<TurnMol["feedback"]> {
  return {
    rating: event.rating,
    ...(event.comment === undefined ? {} : { comment: event.comment }),
    createdAt: Math.floor(event.createdAt / 1000),
  };
}

/** The object without its undefined entries, typed as optional properties (absent, never `undefined`). */
function definedOnly<T extends Record<string, unknown>>(
  record: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
