import type { InboundConfig, InboundScheme } from "../../db/webhook-tables.ts";
import { generateWebhookSecret } from "../../webhooks/webhook-signatures.ts";

/** The API's snake_case inbound settings as stored; a Standard Webhooks sender without a secret gets a new one. */
export function toInboundConfig(body: {
  scheme: InboundScheme;
  secret?: string | undefined;
  thread_key: string;
  text_key: string;
}): InboundConfig {
  return {
    scheme: body.scheme,
    secret: body.secret ?? generateWebhookSecret(),
    threadKey: body.thread_key,
    textKey: body.text_key,
  };
}
