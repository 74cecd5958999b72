import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { MAX_MESSAGE_BYTES } from "../../api/schemas/request-limits.ts";
import type { ResponseEcho } from "../../db/timeline-event.ts";
import { ApiError } from "../../api/errors/api-error.ts";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatResponseObject, type ResponseFormatOptions } from "../../api/format/format-response-object.ts";
import {
  createResponseBodySchema,
  readConversationId,
  readResponseInput,
  type CreateResponseBody,
  type ResponseInputParts,
} from "../../api/schemas/create-response-body-schema.ts";
import { readResponseSampling } from "../../api/schemas/read-sampling.ts";
import { resolveModel } from "../../api/schemas/resolve-model.ts";
import { fromResponseChoice, readTurnOutput } from "../../api/schemas/tool-fields.ts";
import { createResponsesEventStream } from "../../api/sse/create-responses-event-stream.ts";
import { buildTurnRecord } from "../../conversation/build-turn-record.ts";
import type { ConversationHandle } from "../../core/conversation-core.ts";
import type { StartTurnRequest, StartTurnResult } from "../../conversation/conversation-rpc.ts";
import { parseResponseId } from "../../conversation/item-id.ts";
import type { TurnRecord } from "../../conversation/turn-record.ts";
import type { RateLimitHeaders } from "../../limits/tenant-limits.ts";
import { readPartStream } from "../../lib/create-part-stream.ts";
import type { AppEnv } from "../app-deps.ts";
import { hashRequestBody, idempotencyKeyHeadersSchema } from "../read-idempotency-key.ts";
import { readUsageAttribution } from "../read-usage-attribution.ts";
import { requireScope } from "../access-guards.ts";
import { SSE_HEADERS, collectTurn, openTurnStream, toRefusalError } from "../serve-turn.ts";
import { startStatelessTurn, type StatelessTurnInput } from "../start-stateless-turn.ts";
import { isConversationId } from "./require-conversation.ts";
import { admitTurn } from "../admit-turn.ts";
import { harnessPinHeaderFields, readHarnessPin } from "../read-harness-pin.ts";
import { registerResponseObjectRoutes } from "./response-object-routes.ts";
import {
  JSON_BODY_ERRORS,
  TENANT_SECURITY,
  TURN_ERRORS,
  errorResponse,
  errorResponses,
  jsonOrEventStreamResponse,
  jsonBody,
} from "../route-contract.ts";

const createResponseRoute = createRoute({
  method: "post",
  path: "/v1/responses",
  security: TENANT_SECURITY,
  ...jsonBody(createResponseBodySchema({ maxMessageBytes: MAX_MESSAGE_BYTES }), {
    headers: idempotencyKeyHeadersSchema.extend(harnessPinHeaderFields),
  }),
  responses: {
    200: jsonOrEventStreamResponse(
      "A Response (JSON; `queued` with `background: true`), or its typed server-sent events with `stream: true`; `mol` holds the turn's MoL facts",
    ),
    ...errorResponses(...JSON_BODY_ERRORS, 401, 403, ...TURN_ERRORS),
    404: errorResponse(
      "Unknown model, conversation, previous response or input item, or a harness pin (`x-mol-harness`, `metadata.mol_harness`) the tenant cannot see",
    ),
    409: errorResponse("A request with this Idempotency-Key is still in progress (`retry-after`)"),
    422: errorResponse("This Idempotency-Key was used with another body"),
  },
});

/** Where a stored turn goes: its conversation's object, and whether the response shows that conversation. */
interface TurnTarget {
  conversationId: string;
  handle: ConversationHandle;
  inConversation: boolean;
}

/**
 * `POST /v1/responses`: one turn, streamed or not. With `conversation`, a turn of it. With
 * `previous_response_id`, a turn of the conversation that response belongs to when it is that conversation's
 * latest, else of a fork: a new conversation whose timeline is a copy of the old one up to that response (the
 * old one is untouched). With neither, a new implicit conversation: not listed by `GET /v1/conversations`, and
 * `conversation: null` on the response; chaining continues it. `store: false` runs like a chat completion
 * and keeps nothing. `background: true` answers at once (`queued`) and the turn runs on without the client.
 */
export function registerResponseRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/responses/*", requireScope("responses"));
  app.openapi(createResponseRoute, async (c) => {
    const body = c.req.valid("json");
    const model = resolveModel(body.model ?? "mol", DEFAULT_HARNESS.router.labels);
    const forced = model.kind === "forced" ? { forcedLabel: model.label } : {};
    const input = readResponseInput(body.input, body.instructions);
    const echo = readEcho(body, input);
    const output = readTurnOutput({
      tools: body.tools ?? [],
      choice: fromResponseChoice(body.tool_choice),
      parallel: body.parallel_tool_calls,
      format: body.text?.format,
    });
    // The harness pin is checked before anything is stored or charged.
    const harnessPin = await readHarnessPin(c, body.metadata);
    const pin = harnessPin === undefined ? {} : { harnessPin };
    if (body.store === false)
      return serveStatelessResponse(c, body, input, echo, { ...forced, ...output, ...pin });

    const idempotencyKey = c.req.valid("header")["idempotency-key"];
    const named = readConversationId(body.conversation);
    if (named !== undefined && !isConversationId(named))
      throw createNotFoundError("conversation", named, "conversation");
    const previous = body.previous_response_id;
    const chained = previous === undefined ? undefined : parseResponseId(previous);
    if (previous !== undefined && !chained) throw previousNotFound(previous);
    // A new conversation has no items: a reference can only be wrong (and must leave nothing behind).
    if (named === undefined && !chained && input.itemReferences.length > 0)
      throw itemNotFound(input.itemReferences[0] ?? "");

    const limitHeaders = await admitTurn(c);
    const request: StartTurnRequest = {
      conversationId: named ?? chained?.conversationId ?? "",
      text: input.text,
      ...forced,
      sampling: readResponseSampling(body),
      apiOrigin: new URL(c.req.url).origin,
      ...(input.instructions === undefined ? {} : { instructions: input.instructions }),
      ...(input.context.length > 0 ? { context: input.context } : {}),
      ...(input.toolResults.length > 0 ? { toolResults: input.toolResults } : {}),
      ...(chained ? { previousTurnId: chained.turnId } : {}),
      ...(input.itemReferences.length > 0 ? { itemReferences: input.itemReferences } : {}),
      ...(input.outsideCallIds.length > 0 ? { outsideCallIds: input.outsideCallIds } : {}),
      ...output,
      response: echo,
      attribution: readUsageAttribution(c, body.safety_identifier ?? body.user),
      ...pin,
      ...(idempotencyKey
        ? { idempotency: { key: idempotencyKey, requestHash: await hashRequestBody(body) } }
        : {}),
    };
    const { stages } = c.var;
    try {
      const objectStarted = c.var.deps.now();
      const target = await openTarget(c, named, chained?.conversationId, idempotencyKey);
      const started = await startOrFork(c, target, request, body.background === true, idempotencyKey);
      if (!started.ok) throw toRefusalError(started.result, started.conversationId, previous);
      if (started.kind === "background")
        // eslint-disable-next-line @typescript-eslint/return-await -- outside the refund: the background turn has started and is charged
        return serveBackground(c, started.handle, started.conversationId, started.turnId, body, limitHeaders);
      const parts = await openTurnStream(started.stream);
      if (body.stream)
        return new Response(createResponsesEventStream(parts, { keepAliveMs: 15_000 }), {
          headers: { ...SSE_HEADERS, ...limitHeaders },
        });
      const turn = await collectTurn(parts, stages);
      stages.add("object", c.var.deps.now() - objectStarted);
      return stages.timeSync("encode", () => c.json(formatResponseObject(turn), 200, limitHeaders));
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) await c.var.deps.limits(c.var.tenantId).refund();
      throw error;
    }
  });
  registerResponseObjectRoutes(app);
}

type Started =
  | { ok: true; kind: "stream"; stream: ReadableStream<Uint8Array> }
  | { ok: true; kind: "background"; handle: ConversationHandle; conversationId: string; turnId: string }
  | { ok: false; result: Extract<StartTurnResult, { ok: false }>; conversationId: string };

async function openTarget(
  c: Context<AppEnv>,
  named: string | undefined,
  chainedConversation: string | undefined,
  idempotencyKey: string | undefined,
): Promise<TurnTarget> {
  const { deps, tenantId } = c.var;
  if (named !== undefined)
    return { conversationId: named, handle: deps.conversations(tenantId, named), inConversation: true };
  if (chainedConversation !== undefined) {
    const handle = deps.conversations(tenantId, chainedConversation);
    return { conversationId: chainedConversation, handle, inConversation: false };
  }
  return { ...(await createImplicitConversation(c, "new", idempotencyKey)), inConversation: false };
}

/**
 * Not added to the conversation index: it is the response's, not one the tenant made. With an Idempotency-Key
 * its id derives from the key, so a retry lands in the same conversation and replays the turn.
 */
async function createImplicitConversation(
  c: Context<AppEnv>,
  kind: "new" | "fork",
  idempotencyKey: string | undefined,
  seed?: Awaited<ReturnType<ConversationHandle["exportThrough"]>>,
): Promise<{ conversationId: string; handle: ConversationHandle }> {
  const { deps, tenantId } = c.var;
  const conversationId =
    idempotencyKey === undefined
      ? deps.newId("conv")
      : `conv_${(await hashRequestBody({ tenantId, idempotencyKey, kind })).slice(0, 32)}`;
  const handle = deps.conversations(tenantId, conversationId);
  const meta = { id: conversationId, tenantId, createdAt: Math.floor(deps.now() / 1000), metadata: {} };
  await (seed ? handle.createFrom(meta, seed) : handle.create(meta));
  return { conversationId, handle };
}

async function startOrFork(
  c: Context<AppEnv>,
  target: TurnTarget,
  request: StartTurnRequest,
  background: boolean,
  idempotencyKey: string | undefined,
): Promise<Started> {
  const start = async (handle: ConversationHandle, conversationId: string): Promise<Started> => {
    const at = { ...request, conversationId };
    if (background) {
      const result = await handle.startDetachedTurn(at);
      return result.ok
        ? { ok: true, kind: "background", handle, conversationId, turnId: result.turnId }
        : { ok: false, result, conversationId };
    }
    const result = await handle.startTurn(at);
    return result.ok
      ? { ok: true, kind: "stream", stream: result.stream }
      : { ok: false, result, conversationId };
  };
  const first = await start(target.handle, target.conversationId);
  if (first.ok || first.result.refusal.code !== "previous_response_not_latest" || !request.previousTurnId)
    return first;
  // Not the latest response: fork. Item references are checked first, so a bad one leaves no fork behind.
  for (const itemId of request.itemReferences ?? [])
    if (!(await target.handle.readItem(itemId))) throw itemNotFound(itemId);
  const seed = await target.handle.exportThrough(request.previousTurnId);
  if (!seed) return first;
  const fork = await createImplicitConversation(c, "fork", idempotencyKey, seed);
  return start(fork.handle, fork.conversationId);
}

async function serveBackground(
  c: Context<AppEnv>,
  handle: ConversationHandle,
  conversationId: string,
  turnId: string,
  body: CreateResponseBody,
  limitHeaders: RateLimitHeaders,
): Promise<Response> {
  if (body.stream) {
    const stream = await handle.attachTurn(turnId);
    if (!stream) throw createNotFoundError("response", `resp_${turnId}`);
    return new Response(createResponsesEventStream(readPartStream(stream), { keepAliveMs: 15_000 }), {
      headers: { ...SSE_HEADERS, ...limitHeaders },
    });
  }
  const stored = await handle.readTurn(turnId);
  const turn = stored?.turn ?? queuedTurn(conversationId, turnId, c.var.deps.now(), body);
  const options: ResponseFormatOptions = stored ? {} : { status: "queued" };
  return c.json(formatResponseObject(turn, options), 200, limitHeaders);
}

/** A background turn whose user message is not in the timeline yet: what it will be once it starts. */
function queuedTurn(
  conversationId: string,
  turnId: string,
  now: number,
  body: CreateResponseBody,
): TurnRecord {
  const input = readResponseInput(body.input, body.instructions);
  return buildTurnRecord(conversationId, [
    {
      type: "user_message",
      turnId,
      text: input.text,
      harnessHash: "",
      response: readEcho(body, input),
      ...(input.toolResults.length > 0 ? { toolResults: input.toolResults } : {}),
      seq: 0,
      createdAt: now,
    },
  ]);
}

async function serveStatelessResponse(
  c: Context<AppEnv>,
  body: CreateResponseBody,
  input: ResponseInputParts,
  echo: ResponseEcho,
  turn: Pick<StatelessTurnInput, "forcedLabel" | "tools" | "constraint" | "harnessPin">,
): Promise<Response> {
  const limitHeaders = await admitTurn(c);
  const messages = [
    ...(input.instructions === undefined ? [] : [{ role: "system" as const, content: input.instructions }]),
    ...input.context.map((m) => ({ role: m.role, content: m.text })),
    { role: "user" as const, content: input.text },
  ];
  const result = await startStatelessTurn(c, {
    messages,
    ...turn,
    sampling: readResponseSampling(body),
    apiOrigin: new URL(c.req.url).origin,
    cacheKey: body.prompt_cache_key ?? body.user,
    endUser: body.safety_identifier ?? body.user,
  });
  if (!result.ok) throw new Error("stateless turns are never refused");
  const parts = await openTurnStream(result.stream);
  const options: ResponseFormatOptions = { ...formatEcho(echo), store: false, inConversation: false };
  if (body.stream)
    return new Response(createResponsesEventStream(parts, { ...options, keepAliveMs: 15_000 }), {
      headers: { ...SSE_HEADERS, ...limitHeaders },
    });
  return c.json(formatResponseObject(await collectTurn(parts), options), 200, limitHeaders);
}

function readEcho(body: CreateResponseBody, input: ResponseInputParts): ResponseEcho {
  const echo: ResponseEcho = {
    model: body.model,
    metadata: body.metadata,
    temperature: body.temperature,
    topP: body.top_p,
    maxOutputTokens: body.max_output_tokens,
    tools: body.tools,
    toolChoice: body.tool_choice,
    parallelToolCalls: body.parallel_tool_calls,
    text: body.text,
    instructions: input.instructions,
    background: body.background,
    previousResponseId: body.previous_response_id,
    inConversation: body.conversation !== undefined,
  };
  return Object.fromEntries(Object.entries(echo).filter(([, v]) => v !== undefined));
}

/** A stateless turn keeps no echo of its own: the options carry it. */
function formatEcho(echo: ResponseEcho): ResponseFormatOptions {
  return { ...echo };
}

function previousNotFound(id: string): ApiError {
  return createNotFoundError("response", id, "previous_response_id");
}

function itemNotFound(itemId: string): ApiError {
  return new ApiError({
    status: 404,
    type: "invalid_request_error",
    code: "item_not_found",
    param: "input",
    message: `No item found with id '${itemId}'.`,
  });
}
