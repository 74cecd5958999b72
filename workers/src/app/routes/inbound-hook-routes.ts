import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../../api/errors/api-error.ts";
import { createInvalidJsonError, createNotFoundError } from "../../api/errors/request-errors.ts";
import { sha256Hex } from "../../../../schema/harness/content-hash.ts";
import { MAX_INBOUND_BODY_BYTES, readInboundHook } from "../../webhooks/read-inbound-hook.ts";
import { pathIdSchema } from "../../api/schemas/path-id.ts";
import { admitTurn } from "../admit-turn.ts";
import type { AppEnv } from "../app-deps.ts";
import { readLimitedBody } from "../read-json-body.ts";
import { toRefusalError } from "../serve-turn.ts";
import { errorResponse, errorResponses, jsonResponse } from "../route-contract.ts";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

const inboundHookRoute = createRoute({
  method: "post",
  path: "/v1/hooks/{id}",
  request: {
    params: z.object({ id: pathIdSchema("id", "we_0123") }),
    // A plain JSON Schema, not zod: the handler verifies the signature over the raw bytes, so no validator may
    // read (and re-encode) the body first.
    body: {
      content: {
        "application/json": {
          schema: { type: "object", description: "The sender's event, signed per the endpoint's scheme" },
        },
      },
      required: true,
    },
  },
  responses: {
    200: jsonResponse("Slack url_verification: the challenge"),
    202: jsonResponse("Verified and accepted; the answer goes out as conversation.turn.completed"),
    400: errorResponse("The body is not UTF-8, or the payload is malformed"),
    401: errorResponse("Missing or bad signature, or a timestamp outside the tolerance"),
    404: errorResponse("No such endpoint, or it takes no inbound webhooks"),
    409: errorResponse("This delivery id was already accepted"),
    413: errorResponse(`The body is larger than ${MAX_INBOUND_BODY_BYTES} bytes`),
    422: errorResponse("No thread key or text at the configured JSON pointers"),
    ...errorResponses(429),
  },
});

/**
 * `POST /v1/hooks/{endpoint_id}`: a third party's webhook (Standard Webhooks, GitHub or Slack) becomes a turn. The
 * signature over the raw body is the authentication (no API key); a verified, new delivery is acknowledged with 202
 * at once and its answer goes out as the tenant's `conversation.turn.completed` event. Every rejection happens
 * before anything is stored.
 */
export function registerInboundHookRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(inboundHookRoute, async (c) => {
    const { deps } = c.var;
    const endpointId = c.req.valid("param").id;
    const bytes = await readLimitedBody(c.req.raw.body, MAX_INBOUND_BODY_BYTES);
    let body: string;
    try {
      body = decoder.decode(bytes);
    } catch {
      throw createInvalidJsonError();
    }
    const endpoint = await deps.webhookEndpoints.getById(endpointId);
    if (!endpoint?.inbound || endpoint.status !== "enabled")
      throw createNotFoundError("webhook_endpoint", endpointId);
    const read = await readInboundHook(endpoint.inbound, { headers: c.req.raw.headers, body, now: deps.now });
    if (!read.ok) {
      const { status, code, message } = read.rejection;
      throw new ApiError({ status, type: "invalid_request_error", code, message });
    }
    const { hook } = read;
    if (hook.kind === "challenge") return c.json({ challenge: hook.challenge }, 200);

    const tenantId = endpoint.tenantId;
    c.set("tenantId", tenantId);
    const rateHeaders = await admitTurn(c);
    const conversationId = `conv_${(await sha256Hex(`${endpoint.id}\n${hook.threadKey}`)).slice(0, 32)}`;
    const receivedAt = Math.floor(deps.now() / 1000);
    const fresh = await deps.webhookEndpoints.recordInbound({
      endpointId,
      deliveryId: hook.deliveryId,
      conversationId,
      receivedAt,
    });
    if (!fresh) {
      throw new ApiError({
        status: 409,
        type: "invalid_request_error",
        code: "duplicate_delivery",
        message: `Delivery '${hook.deliveryId}' was already accepted.`,
        headers: { "x-should-retry": "false" },
      });
    }
    try {
      const handle = deps.conversations(tenantId, conversationId);
      const meta = await handle.create({
        id: conversationId,
        tenantId,
        createdAt: receivedAt,
        metadata: { source: "webhook", webhook_endpoint_id: endpoint.id, thread_key: hook.threadKey },
      });
      await deps.conversationIndex.add(meta);
      const started = await handle.startDetachedTurn({
        conversationId,
        text: hook.text,
        attribution: { keyId: `hook:${endpoint.id}` },
        idempotency: { key: `hook:${endpoint.id}:${hook.deliveryId}`, requestHash: await sha256Hex(body) },
      });
      if (!started.ok) throw toRefusalError(started, conversationId);
      return c.json(
        {
          object: "inbound_delivery",
          delivery_id: hook.deliveryId,
          conversation_id: conversationId,
          turn_id: started.turnId,
        },
        202,
        rateHeaders,
      );
    } catch (error) {
      // The turn never started: forget the delivery so the sender's retry is accepted, not refused as a replay.
      await deps.webhookEndpoints.forgetInbound(endpointId, hook.deliveryId);
      throw error;
    }
  });
}
