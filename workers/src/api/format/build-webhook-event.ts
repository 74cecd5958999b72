import type { WebhookEventType } from "../../db/webhook-tables.ts";
import type { TurnRecord } from "../../conversation/turn-record.ts";
import { sha256Hex } from "../../../../schema/harness/content-hash.ts";
import { mapTurnErrorToApiError, toPublicError } from "../errors/api-error.ts";
import { formatMol } from "./format-mol.ts";
import { formatFunctionCallItems, toResponseId } from "./format-response-object.ts";
import type { WebhookEvent } from "../../webhooks/flush-webhook-outbox.ts";
import type { RollbackNotice } from "../../harness-registry/guard-rollout.ts";

export type { WebhookEvent } from "../../webhooks/flush-webhook-outbox.ts";

/** Answers longer than this travel as a link to the assistant item rather than inline. */
export const MAX_INLINE_ANSWER_CHARS = 16_384;

export interface TurnEventContext {
  conversationId: string;
  /** The conversation's metadata (e.g. the inbound thread it came from), so receivers can route the answer. */
  metadata: Record<string, string>;
  /** Unix ms of the event. */
  now: number;
}

/** The message id is a hash of turn and type: re-flushing an event can never make it a second message. */
async function createMessageId(turnId: string, type: WebhookEventType): Promise<string> {
  return `msg_${(await sha256Hex(`${turnId}\n${type}`)).slice(0, 32)}`;
}

async function createEvent(
  type: WebhookEventType,
  turn: TurnRecord,
  ctx: TurnEventContext,
  data: Record<string, unknown>,
): Promise<WebhookEvent> {
  const body = JSON.stringify({
    type,
    timestamp: new Date(ctx.now).toISOString(),
    data: {
      conversation_id: ctx.conversationId,
      conversation_metadata: ctx.metadata,
      turn_id: turn.turnId,
      // The id the client got back from POST /v1/responses, and the metadata it sent with it.
      response_id: toResponseId(turn.turnId),
      metadata: turn.response?.metadata ?? {},
      ...data,
    },
  });
  return { id: await createMessageId(turn.turnId, type), type, body };
}

function describeMol(turn: TurnRecord) {
  const mol = formatMol(turn.mol);
  return {
    route: { label: mol.label, source: mol.source, ...(mol.fallback ? { fallback: mol.fallback } : {}) },
    adapter: mol.adapter,
    usage: mol.usage,
    timings: mol.timings,
  };
}

/**
 * `conversation.turn.completed`: route label, adapter, the answer (or a link to it), usage and hop timings. A
 * turn that ended in function calls (`finish_reason: "tool_calls"`, empty answer) carries them as OpenAI's
 * `function_call` items, with the ids a client's `item_reference` and `function_call_output` name.
 */
export function buildTurnCompletedEvent(turn: TurnRecord, ctx: TurnEventContext): Promise<WebhookEvent> {
  const inline = turn.answerText.length <= MAX_INLINE_ANSWER_CHARS;
  return createEvent("conversation.turn.completed", turn, ctx, {
    user_text: turn.userText,
    ...(inline
      ? { answer: turn.answerText }
      : { answer_url: `/v1/conversations/${ctx.conversationId}/items/${turn.assistantItemId}` }),
    assistant_item_id: turn.assistantItemId,
    finish_reason: turn.finishReason ?? null,
    ...(turn.toolCalls ? { tool_calls: formatFunctionCallItems(turn) } : {}),
    // A turn whose input was tool results: the results themselves, not only their view text in `user_text`.
    ...(turn.toolResults
      ? { tool_results: turn.toolResults.map((r) => ({ call_id: r.callId, output: r.output })) }
      : {}),
    ...describeMol(turn),
  });
}

/** `conversation.turn.failed`: the error code and message (a cancelled turn is a failure with code `cancelled`). */
export function buildTurnFailedEvent(turn: TurnRecord, ctx: TurnEventContext): Promise<WebhookEvent> {
  return createEvent("conversation.turn.failed", turn, ctx, {
    user_text: turn.userText,
    status: turn.status,
    // Receivers are clients too: the node's message (subjects, node ids) stays inside.
    error: toPublicError(
      mapTurnErrorToApiError(turn.error ?? { code: "engine_failure", message: "the turn did not complete" }),
    ),
    ...describeMol(turn),
  });
}

/** `conversation.summary.created`: the specialist's summary of the turn, as stored for later views. */
export function buildSummaryCreatedEvent(turn: TurnRecord, ctx: TurnEventContext): Promise<WebhookEvent> {
  return createEvent("conversation.summary.created", turn, ctx, {
    summary: turn.mol.summary.text ?? "",
    adapter: turn.mol.adapter,
    usage: turn.mol.usage.summary ?? null,
    timings: { summary_ms: turn.mol.timings.summaryMs ?? null },
  });
}

/**
 * `harness.rolled_back`: the rollout guard removed a label's canary; the label as moved, the canary removed, why
 * (the statistic) and the evidence. One message per move: its id is a hash of tenant, label and revision.
 */
export async function buildHarnessRolledBackEvent(
  notice: RollbackNotice,
  now: number,
): Promise<WebhookEvent> {
  const type = "harness.rolled_back";
  const { label, decision } = notice;
  const body = JSON.stringify({
    type,
    timestamp: new Date(now).toISOString(),
    data: {
      label: label.name,
      revision: label.revision,
      harness: label.harness,
      canary_harness: notice.canaryHarness,
      actor: label.updatedBy,
      reason: notice.reason,
      statistic: {
        test: "sprt",
        llr: decision.llr,
        boundary: decision.boundary,
        p0: decision.p0,
        p1: decision.p1,
        production: decision.production,
        canary: decision.canary,
      },
      rolled_back_at: notice.at,
    },
  });
  const id = `msg_${(await sha256Hex(`${notice.tenantId}\n${label.name}\n${label.revision}\n${type}`)).slice(0, 32)}`;
  return { id, type, body };
}
