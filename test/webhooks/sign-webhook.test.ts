import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateWebhookSecret, signWebhook } from "../../workers/src/webhooks/webhook-signatures.ts";

const body = JSON.stringify({
  type: "response.completed",
  timestamp: "2026-01-01T00:00:00Z",
  data: { id: "r_1" },
});
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe("generateWebhookSecret", () => {
  it("is whsec_ + base64 of 32 random bytes, different every time", () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });
});

describe("signWebhook", () => {
  it("matches the Standard Webhooks reference vector", () => {
    const headers = signWebhook({
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    });
    expect(headers["webhook-signature"]).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("is the base64 HMAC-SHA256 of id.timestamp.body under the decoded key", () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({ id: "msg_1", timestamp: 1_700_000_000, body, secrets: [secret] });
    const key = Buffer.from(secret.slice(6), "base64");
    const expected = createHmac("sha256", key).update(`msg_1.1700000000.${body}`).digest("base64");
    expect(headers).toEqual({
      "webhook-id": "msg_1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": `v1,${expected}`,
    });
  });

  it("is accepted by the standardwebhooks package under either secret during rotation", () => {
    const [oldSecret, newSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signWebhook({
      id: "msg_2",
      timestamp: nowSeconds(),
      body,
      secrets: [oldSecret, newSecret],
    });
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [oldSecret, newSecret])
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(/No matching signature/);
  });

  it("fails the package's verification when body, id or timestamp is tampered with", () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({ id: "msg_3", timestamp: nowSeconds(), body, secrets: [secret] });
    const webhook = new Webhook(secret);
    expect(() => webhook.verify(body.replace("r_1", "r_2"), headers)).toThrow(/No matching signature/);
    expect(() => webhook.verify(body, { ...headers, "webhook-id": "msg_4" })).toThrow(
      /No matching signature/,
    );
    const shifted = String(Number(headers["webhook-timestamp"]) - 1);
    expect(() => webhook.verify(body, { ...headers, "webhook-timestamp": shifted })).toThrow(
      /No matching signature/,
    );
  });

  it("rejects inputs that would make a broken or unverifiable delivery", () => {
    expect(() => signWebhook({ id: "msg_5", timestamp: 1, body, secrets: [] })).toThrow(/secret/);
    expect(() =>
      signWebhook({ id: "msg 5", timestamp: 1, body, secrets: [generateWebhookSecret()] }),
    ).toThrow(/id/);
    expect(() =>
      signWebhook({ id: "msg_5", timestamp: 1.5, body, secrets: [generateWebhookSecret()] }),
    ).toThrow(/timestamp/);
  });
});
