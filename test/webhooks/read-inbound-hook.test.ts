import { describe, expect, it } from "vitest";
import { isJsonPointer, readJsonPointer } from "../../workers/src/webhooks/read-json-pointer.ts";
import { readInboundHook } from "../../workers/src/webhooks/read-inbound-hook.ts";
import { encodeHex } from "../../schema/harness/content-hash.ts";
import { hmacSha256 } from "../../workers/src/webhooks/webhook-signatures.ts";

describe("readJsonPointer (RFC 6901)", () => {
  const doc = { foo: ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8, nested: { thread: { ts: "17.2" } } };
  it.each([
    ["", doc],
    ["/foo", ["bar", "baz"]],
    ["/foo/0", "bar"],
    ["/", 0],
    ["/a~1b", 1],
    ["/m~0n", 8],
    ["/nested/thread/ts", "17.2"],
  ])("%s", (pointer, expected) => {
    expect(readJsonPointer(doc, pointer)).toEqual(expected);
  });

  it.each(["/foo/01", "/foo/2", "/missing", "/nested/thread/ts/x", "/toString", "/constructor"])(
    "%s is absent",
    (pointer) => {
      expect(readJsonPointer(doc, pointer)).toBeUndefined();
    },
  );

  it("rejects what is not a pointer", () => {
    for (const bad of ["foo", "/a~2", "/a~"]) expect(isJsonPointer(bad)).toBe(false);
  });
});

describe("readInboundHook", () => {
  const config = {
    scheme: "github" as const,
    secret: "s3cret-value",
    threadKey: "/issue/number",
    textKey: "/comment/body",
  };
  const signed = async (body: string, id = "d-1") =>
    new Headers({
      "x-github-delivery": id,
      "x-hub-signature-256": `sha256=${encodeHex(await hmacSha256(config.secret, body))}`,
    });
  const now = () => Date.now();

  it("reads the thread key (numbers become strings) and the text", async () => {
    const body = JSON.stringify({ issue: { number: 7 }, comment: { body: "hi" } });
    const read = await readInboundHook(config, { headers: await signed(body), body, now });
    expect(read).toEqual({ ok: true, hook: { kind: "turn", deliveryId: "d-1", threadKey: "7", text: "hi" } });
  });

  it("checks the signature before parsing: an unsigned malformed body is a 401, not a 400", async () => {
    const read = await readInboundHook(config, { headers: new Headers(), body: "{bad", now });
    expect(read).toMatchObject({ ok: false, rejection: { status: 401, code: "missing_signature" } });
  });

  it.each([
    [{ issue: {}, comment: { body: "hi" } }, "missing_thread_key"],
    [{ issue: { number: 7 }, comment: { body: "   " } }, "missing_text"],
    [{ issue: { number: 7 }, comment: { body: 42 } }, "missing_text"],
    [{ issue: { number: "x".repeat(300) }, comment: { body: "hi" } }, "missing_thread_key"],
  ])("refuses %j with 422 %s", async (payload, code) => {
    const body = JSON.stringify(payload);
    const read = await readInboundHook(config, { headers: await signed(body), body, now });
    expect(read).toMatchObject({ ok: false, rejection: { status: 422, code } });
  });
});
