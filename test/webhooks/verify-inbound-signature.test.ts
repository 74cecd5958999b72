import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  generateWebhookSecret,
  signWebhook,
  verifyInboundSignature,
  type InboundRequest,
} from "../../workers/src/webhooks/webhook-signatures.ts";

const body = '{"action":"opened","number":7}';
const T = 1_700_000_000;
const at = (seconds: number) => () => seconds * 1000;
const hexHmac = (secret: string, message: string) =>
  createHmac("sha256", secret).update(message).digest("hex");

const verify = (request: Partial<InboundRequest> & Pick<InboundRequest, "scheme" | "headers">) =>
  verifyInboundSignature({ secrets: ["s3cret"], body, now: at(T), ...request });

describe("verifyInboundSignature: standard", () => {
  const secret = generateWebhookSecret();
  const headers = signWebhook({ id: "msg_1", timestamp: T, body, secrets: [secret] });
  const standard = (overrides: Partial<InboundRequest> = {}) =>
    verify({ scheme: "standard", headers, secrets: [secret], ...overrides });

  it("accepts our signer's output and returns the webhook-id as delivery id", async () => {
    expect(await standard()).toEqual({ ok: true, deliveryId: "msg_1" });
    expect(await standard({ headers: new Headers(headers) })).toEqual({ ok: true, deliveryId: "msg_1" });
  });

  it("accepts the package's own signature, and any of several receiver secrets", async () => {
    const other = generateWebhookSecret();
    const packageSigned = new Webhook(other).sign("msg_9", new Date(T * 1000), body);
    const request = { ...headers, "webhook-id": "msg_9", "webhook-signature": `v1,bogus ${packageSigned}` };
    expect(await standard({ headers: request, secrets: [secret, other] })).toEqual({
      ok: true,
      deliveryId: "msg_9",
    });
  });

  it("rejects tampered body, id, timestamp, wrong secret and non-v1 entries", async () => {
    expect(await standard({ body: body + " " })).toEqual({ ok: false, reason: "bad_signature" });
    expect(await standard({ headers: { ...headers, "webhook-id": "msg_2" } })).toMatchObject({
      reason: "bad_signature",
    });
    const shifted = { ...headers, "webhook-timestamp": String(T + 1) };
    expect(await standard({ headers: shifted })).toMatchObject({ reason: "bad_signature" });
    expect(await standard({ secrets: [generateWebhookSecret()] })).toMatchObject({ reason: "bad_signature" });
    const v2 = { ...headers, "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,") };
    expect(await standard({ headers: v2 })).toMatchObject({ reason: "bad_signature" });
  });

  it("allows ±5 minutes of skew and calls anything beyond stale", async () => {
    expect(await standard({ now: at(T + 300) })).toMatchObject({ ok: true });
    expect(await standard({ now: at(T - 300) })).toMatchObject({ ok: true });
    expect(await standard({ now: at(T + 301) })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await standard({ now: at(T - 301) })).toEqual({ ok: false, reason: "stale_timestamp" });
  });

  it("reports missing headers and malformed timestamps", async () => {
    const { ["webhook-signature"]: _dropped, ...partial } = headers;
    expect(await standard({ headers: partial })).toEqual({ ok: false, reason: "missing_headers" });
    const malformed = { ...headers, "webhook-timestamp": `${T}abc` };
    expect(await standard({ headers: malformed })).toEqual({ ok: false, reason: "bad_signature" });
  });
});

describe("verifyInboundSignature: github", () => {
  const headers = {
    "X-Hub-Signature-256": `sha256=${hexHmac("s3cret", body)}`,
    "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    "X-GitHub-Event": "issues",
  };

  it("accepts a hand-computed HMAC, whatever the clock says (GitHub signs no timestamp)", async () => {
    const expected = { ok: true, deliveryId: "72d3162e-cc78-11e3-81ab-4c9367dc0958" };
    expect(await verify({ scheme: "github", headers })).toEqual(expected);
    expect(await verify({ scheme: "github", headers, now: at(T + 86_400) })).toEqual(expected);
  });

  it("rejects a tampered body, wrong secret, the SHA-1 header style, and missing headers", async () => {
    expect(await verify({ scheme: "github", headers, body: body.replace("7", "8") })).toMatchObject({
      reason: "bad_signature",
    });
    expect(await verify({ scheme: "github", headers, secrets: ["other"] })).toMatchObject({
      reason: "bad_signature",
    });
    const sha1Style = { ...headers, "X-Hub-Signature-256": `sha1=${hexHmac("s3cret", body)}` };
    expect(await verify({ scheme: "github", headers: sha1Style })).toMatchObject({ reason: "bad_signature" });
    const noDelivery = { "X-Hub-Signature-256": headers["X-Hub-Signature-256"] };
    expect(await verify({ scheme: "github", headers: noDelivery })).toEqual({
      ok: false,
      reason: "missing_headers",
    });
  });
});

describe("verifyInboundSignature: slack", () => {
  const slackBody = "token=x&team_id=T1&command=%2Fmol&text=hello";
  const signature = `v0=${hexHmac("s3cret", `v0:${T}:${slackBody}`)}`;
  const headers = { "X-Slack-Signature": signature, "X-Slack-Request-Timestamp": String(T) };
  const slack = (overrides: Partial<InboundRequest> = {}) =>
    verify({ scheme: "slack", headers, body: slackBody, ...overrides });

  it("accepts a hand-computed v0 signature", async () => {
    expect(await slack()).toEqual({ ok: true, deliveryId: signature });
  });

  it("rejects requests older (or further ahead) than 5 minutes, even when correctly signed", async () => {
    expect(await slack({ now: at(T + 299) })).toMatchObject({ ok: true });
    expect(await slack({ now: at(T + 301) })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await slack({ now: at(T - 301) })).toEqual({ ok: false, reason: "stale_timestamp" });
  });

  it("rejects a tampered body or timestamp and missing headers", async () => {
    expect(await slack({ body: slackBody + "!" })).toEqual({ ok: false, reason: "bad_signature" });
    const moved = { ...headers, "X-Slack-Request-Timestamp": String(T + 1) };
    expect(await slack({ headers: moved })).toEqual({ ok: false, reason: "bad_signature" });
    expect(await slack({ headers: { "X-Slack-Signature": signature } })).toEqual({
      ok: false,
      reason: "missing_headers",
    });
  });
});
