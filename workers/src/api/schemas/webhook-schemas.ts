import { z } from "@hono/zod-openapi";
import { WEBHOOK_EVENT_TYPES, type InboundScheme } from "../../db/webhook-tables.ts";
import { JSON_POINTER } from "../../webhooks/read-json-pointer.ts";
import { pageQueryFields } from "./page-query-fields.ts";

export const MAX_WEBHOOK_URL_CHARS = 2048;
export const MAX_WEBHOOK_DESCRIPTION_CHARS = 512;
/** A day: receivers roll their verifying secret within it, while both signatures are sent. */
export const DEFAULT_SECRET_GRACE_SECONDS = 24 * 3600;
export const MAX_SECRET_GRACE_SECONDS = 7 * 24 * 3600;

/** RFC 6901: empty (the whole document) or `/`-separated tokens where `~` only escapes (`~0`, `~1`). */
const jsonPointer = z
  .string()
  .max(256)
  .regex(JSON_POINTER, { message: "must be a JSON pointer (RFC 6901), e.g. /event/thread_ts" });

const eventsSchema = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((events) => new Set(events).size === events.length, "must not repeat an event type")
  .openapi({ uniqueItems: true });

const secretSchema = z.string().min(8).max(256);
const pointerFields = {
  thread_key: jsonPointer.openapi({ description: "JSON pointer to the value naming the conversation." }),
  text_key: jsonPointer.default("/text").openapi({ description: "JSON pointer to the message text." }),
};
/** GitHub and Slack sign with the secret they hold, so it must be given; for standard, one is generated. */
const inboundSchema = z.discriminatedUnion("scheme", [
  z.strictObject({
    scheme: z.literal("standard"),
    secret: secretSchema.optional().openapi({ description: "Generated (whsec_…) when absent." }),
    ...pointerFields,
  }),
  z.strictObject({
    scheme: z.enum(["github", "slack"] as const satisfies readonly InboundScheme[]),
    secret: secretSchema.openapi({ description: "The sender's signing secret." }),
    ...pointerFields,
  }),
]);

/** `POST /v1/webhook_endpoints`. */
export const createWebhookEndpointBodySchema = z
  .strictObject({
    url: z.string().min(1).max(MAX_WEBHOOK_URL_CHARS),
    events: eventsSchema,
    description: z.string().max(MAX_WEBHOOK_DESCRIPTION_CHARS).optional(),
    inbound: inboundSchema.optional(),
  })
  .openapi("CreateWebhookEndpointRequest");

/** `PATCH /v1/webhook_endpoints/{id}`: `status: "enabled"` re-enables an endpoint disabled after a 410. */
export const updateWebhookEndpointBodySchema = z
  .strictObject({
    url: z.string().min(1).max(MAX_WEBHOOK_URL_CHARS).optional(),
    events: eventsSchema.optional(),
    description: z.string().max(MAX_WEBHOOK_DESCRIPTION_CHARS).optional(),
    status: z.enum(["enabled", "disabled"]).optional(),
    inbound: inboundSchema.nullable().optional(),
  })
  .openapi("UpdateWebhookEndpointRequest");

/** `POST /v1/webhook_endpoints/{id}/rotate_secret`; the body may be absent. */
export const rotateWebhookSecretBodySchema = z
  .strictObject({
    grace_seconds: z.number().int().min(0).max(MAX_SECRET_GRACE_SECONDS).optional().openapi({
      description: "How long deliveries are also signed with the old secret (default a day).",
    }),
  })
  .openapi("RotateWebhookSecretRequest");

export const listDeliveriesQuerySchema = z.object({
  after: z.string().min(1).optional(),
  limit: pageQueryFields.limit,
  status: z.enum(["pending", "delivered", "dead"]).optional(),
});

export type CreateWebhookEndpointBody = z.infer<typeof createWebhookEndpointBodySchema>;
