import type { StoredTimelineEvent, TimelineEvent } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { toWireErrorPayload } from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../gpu/hop-client.ts";
import type { HopPlacement } from "./place-hop.ts";
import type { HopTimeouts } from "./turn-context.ts";
import { renderChatMessagesPrompt } from "../views/render-prompts.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import type { StatelessTurnRequest } from "./conversation-rpc.ts";
import { decideRoute } from "./decide-route.ts";
import { runAnswerHop } from "./run-answer-hop.ts";
import type { TurnMol, TurnStreamPart } from "./turn-record.ts";

export interface StatelessTurnContext {
  hops: HopClient;
  placement: HopPlacement;
  hopTimeouts: HopTimeouts;
  harness: HarnessDocument;
  harnessHash: string;
  now: () => number;
}

/**
 * A turn for `/v1/chat/completions`: the client sends the whole history, nothing is stored, and there is no
 * summary hop. The same hops and turn record as a stored turn, with the events kept in memory only; the GPU
 * node's KV slot is keyed by the client's conversation so a growing history still reuses its prefix.
 */
export async function runStatelessTurn(
  ctx: StatelessTurnContext,
  request: StatelessTurnRequest,
  emit: (part: TurnStreamPart) => void,
  signal: AbortSignal,
): Promise<TurnMol | undefined> {
  const { harness } = ctx;
  const turnId = `turn_${crypto.randomUUID().replace(/-/g, "")}`;
  const conversationId = request.conversationKey;
  const events: StoredTimelineEvent[] = [];
  const append = (event: TimelineEvent) =>
    events.push({ ...event, seq: events.length + 1, createdAt: ctx.now() });
  const record = () => buildTurnRecord(conversationId, events);
  const last = request.messages.at(-1);
  const forced = request.forcedLabel ? { forcedLabel: request.forcedLabel } : {};
  append({
    type: "user_message",
    turnId,
    text: last?.content ?? "",
    harnessHash: ctx.harnessHash,
    ...forced,
  });
  const decision = await decideRoute({
    ...ctx,
    conversationId,
    turnId,
    prompt: renderChatMessagesPrompt(request.messages, "router", harness),
    ...forced,
  });
  append(decision);
  emit({ type: "turn-start", turn: record() });
  try {
    append(
      await runAnswerHop({
        ...ctx,
        conversationId,
        turnId,
        label: decision.label,
        prompt: renderChatMessagesPrompt(request.messages, decision.label, harness),
        sampling: request.sampling,
        signal,
        onDelta: (delta) => emit({ type: "text-delta", delta }),
      }),
    );
  } catch (error) {
    if (signal.aborted) return record().mol;
    const { code, message } = toWireErrorPayload(error);
    append({ type: "turn_failed", turnId, hop: "answer", code, message });
    emit({ type: "turn-error", turn: record(), error: { code, message } });
    return record().mol;
  }
  emit({ type: "turn-finish", turn: record() });
  return record().mol;
}
