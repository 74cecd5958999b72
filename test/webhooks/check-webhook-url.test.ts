import { describe, expect, it } from "vitest";
import { checkWebhookUrl } from "../../workers/src/webhooks/check-webhook-url.ts";

const accepted = [
  "https://example.com/hooks",
  "http://example.com:8080/x?y=1",
  "https://8.8.8.8/",
  "https://[2606:4700:4700::1111]/",
  "https://[::ffff:8.8.8.8]/",
  "https://172.32.0.1/", // just outside 172.16/12
  "https://100.128.0.1/", // just outside 100.64/10
  "https://localhost.example.com/", // only the .localhost TLD is loopback
];

const rejected: Array<[string, string]> = [
  ["not a url", "invalid_url"],
  ["ftp://example.com/", "bad_scheme"],
  ["file:///etc/passwd", "bad_scheme"],
  ["javascript:alert(1)", "bad_scheme"],
  ["https://user:pass@example.com/", "userinfo"],
  ["https://user@example.com/", "userinfo"],
  ["http://127.0.0.1/", "forbidden_host"],
  ["http://127.5.6.7/", "forbidden_host"],
  ["http://localhost:8787/", "forbidden_host"],
  ["http://LOCALHOST./", "forbidden_host"],
  ["http://api.localhost/", "forbidden_host"],
  ["http://[::1]/", "forbidden_host"],
  ["http://[::]/", "forbidden_host"],
  ["http://0.0.0.0/", "forbidden_host"],
  ["http://10.1.2.3/", "forbidden_host"],
  ["http://172.16.0.1/", "forbidden_host"],
  ["http://172.31.255.255/", "forbidden_host"],
  ["http://192.168.1.1/", "forbidden_host"],
  ["http://100.64.0.1/", "forbidden_host"],
  ["http://100.127.255.255/", "forbidden_host"],
  ["http://169.254.169.254/latest/meta-data/", "forbidden_host"],
  ["http://224.0.0.1/", "forbidden_host"],
  ["http://255.255.255.255/", "forbidden_host"],
  ["http://[fc00::1]/", "forbidden_host"],
  ["http://[fd12:3456::1]/", "forbidden_host"],
  ["http://[fe80::1]/", "forbidden_host"],
  ["http://[ff02::1]/", "forbidden_host"],
  ["http://[::ffff:127.0.0.1]/", "forbidden_host"],
  ["http://[::ffff:10.0.0.1]/", "forbidden_host"],
  ["http://[::ffff:169.254.169.254]/", "forbidden_host"],
  ["http://[::127.0.0.1]/", "forbidden_host"],
  ["http://[64:ff9b::a9fe:a9fe]/", "forbidden_host"], // NAT64 of 169.254.169.254
  ["http://metadata.google.internal/computeMetadata/v1/", "forbidden_host"],
  ["http://metadata/", "forbidden_host"],
  ["http://printer.local/", "forbidden_host"],
  ["http://2130706433/", "forbidden_host"], // 127.0.0.1 as one decimal number
  ["http://0x7f000001/", "forbidden_host"],
  ["http://0x7f.1/", "forbidden_host"],
  ["http://0177.0.0.1/", "forbidden_host"], // octal
  ["http://017700000001/", "forbidden_host"],
  ["http://3232235777/", "forbidden_host"], // 192.168.1.1
  ["http://0xa9.0xfe.0xa9.0xfe/", "forbidden_host"], // 169.254.169.254 in hex
  ["http://127.1/", "forbidden_host"],
];

describe("checkWebhookUrl", () => {
  it.each(accepted)("accepts %s", (url) => {
    expect(checkWebhookUrl(url)).toMatchObject({ ok: true });
  });

  it.each(rejected)("rejects %s (%s)", (url, reason) => {
    expect(checkWebhookUrl(url)).toEqual({ ok: false, reason });
  });

  it("returns the normalised URL", () => {
    expect(checkWebhookUrl("HTTPS://Example.COM/a")).toEqual({ ok: true, url: "https://example.com/a" });
  });

  it("with allowLoopback admits loopback, in every spelling, but nothing else private", () => {
    const dev = { allowLoopback: true };
    for (const url of ["http://127.0.0.1:8787/", "http://localhost/", "http://[::1]/", "http://0x7f.1/"])
      expect(checkWebhookUrl(url, dev)).toMatchObject({ ok: true });
    expect(checkWebhookUrl("http://[::ffff:127.0.0.1]/", dev)).toMatchObject({ ok: true });
    for (const url of [
      "http://10.0.0.1/",
      "http://169.254.169.254/",
      "http://[fe80::1]/",
      "http://metadata/",
    ])
      expect(checkWebhookUrl(url, dev)).toEqual({ ok: false, reason: "forbidden_host" });
    expect(checkWebhookUrl("https://u:p@localhost/", dev)).toEqual({ ok: false, reason: "userinfo" });
  });
});
