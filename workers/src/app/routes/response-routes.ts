import type { OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { MAX_MESSAGE_BYTES } from "../../api/schemas/request-limits.ts";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatResponseObject } from "../../api/format/format-response-object.ts";
import {
  createResponseBodySchema,
  readConversationId,
  readResponseInputText,
} from "../../api/schemas/create-response-body-schema.ts";
import { readResponseSampling } from "../../api/schemas/read-sampling.ts";
import { resolveModel } from "../../api/schemas/resolve-model.ts";
import { createResponsesEventStream } from "../../api/sse/create-responses-event-stream.ts";
import type { AppEnv } from "../app-deps.ts";
import { hashRequestBody, readIdempotencyKey } from "../read-idempotency-key.ts";
import { readJsonBody } from "../read-json-body.ts";
import { requireScope } from "../access-guards.ts";
import { SSE_HEADERS, collectTurn, openTurnStream, toRefusalError } from "../serve-turn.ts";
import { isConversationId } from "./require-conversation.ts";
import { admitTurn } from "../admit-turn.ts";

const responseBodySchema = createResponseBodySchema({
  maxMessageBytes: MAX_MESSAGE_BYTES,
});

/** `POST /v1/responses`: one turn of a server-side conversation, streamed or not. */
export function registerResponseRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/responses/*", requireScope("responses"));
  app.post("/v1/responses", async (c) => {
    const body = await readJsonBody(c, responseBodySchema);
    const idempotencyKey = readIdempotencyKey(c);
    const conversationId = readConversationId(body.conversation);
    if (!isConversationId(conversationId))
      throw createNotFoundError("conversation", conversationId, "conversation");
    const model = resolveModel(body.model ?? "mol", DEFAULT_HARNESS.router.labels);
    const limitHeaders = await admitTurn(c);
    const result = await c.var.deps.conversations(c.var.tenantId, conversationId).startTurn({
      conversationId,
      text: readResponseInputText(body.input),
      ...(model.kind === "forced" ? { forcedLabel: model.label } : {}),
      sampling: readResponseSampling(body),
      apiOrigin: new URL(c.req.url).origin,
      ...(idempotencyKey
        ? { idempotency: { key: idempotencyKey, requestHash: await hashRequestBody(body) } }
        : {}),
    });
    if (!result.ok) {
      await c.var.deps.limits(c.var.tenantId).refund();
      throw toRefusalError(result, conversationId);
    }
    const parts = await openTurnStream(result.stream);
    const options = { metadata: body.metadata ?? null, ...(body.model ? { model: body.model } : {}) };
    if (body.stream)
      return new Response(createResponsesEventStream(parts, { ...options, keepAliveMs: 15_000 }), {
        headers: { ...SSE_HEADERS, ...limitHeaders },
      });
    return c.json(formatResponseObject(await collectTurn(parts), options), 200, limitHeaders);
  });
}
