/**
 * SSRF guard for outbound webhook targets, applied when an endpoint is registered and again before each delivery.
 *
 * It judges the URL only. A public hostname whose DNS later answers with a private address (DNS rebinding) cannot be
 * caught here: Workers have no resolver API, and `fetch` resolves on its own after any check we could make. What
 * mitigates it: Workers' `fetch` egresses from Cloudflare's network, which cannot reach our private networks or a cloud
 * metadata service; deliveries use `redirect: "manual"` and never follow a `Location` without checking it here; and a
 * Node-hosted sender must pin the checked address in its socket `lookup` rather than trust a second resolution.
 */
import ipaddr from "ipaddr.js";

export type WebhookUrlCheck =
  | { ok: true; url: string }
  | { ok: false; reason: "invalid_url" | "bad_scheme" | "userinfo" | "forbidden_host" };

export interface WebhookUrlPolicy {
  /** Dev only: admits loopback (e.g. a local receiver on 127.0.0.1) while every other private range stays closed. */
  allowLoopback?: boolean;
}

type HostClass = "public" | "loopback" | "forbidden";

/** Names that reach cloud instance metadata or otherwise resolve only inside a private network. */
const FORBIDDEN_HOSTNAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.internal",
  "instance-data",
  "instance-data.ec2.internal",
]);

/** Private-use suffixes: `.internal` (ICANN-reserved for private networks) and `.local` (mDNS). */
const FORBIDDEN_SUFFIXES = [".internal", ".local", ".home.arpa"];

/** Checks that a webhook target is plain http(s) to a public host, so tenants cannot aim deliveries at our network. */
export function checkWebhookUrl(raw: string, policy: WebhookUrlPolicy = {}): WebhookUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "invalid_url" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "bad_scheme" };
  // Credentials in the URL would be sent to the receiver and logged with the endpoint; they also hide the real host.
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "userinfo" };
  // The WHATWG parser has already turned 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1, and IPv6 into hex groups.
  const hostClass = classifyHost(url.hostname.toLowerCase().replace(/\.$/, ""));
  if (hostClass === "public" || (hostClass === "loopback" && policy.allowLoopback === true)) {
    return { ok: true, url: url.href };
  }
  return { ok: false, reason: "forbidden_host" };
}

function classifyHost(host: string): HostClass {
  if (host === "") return "forbidden";
  if (host.startsWith("[")) {
    const text = host.slice(1, -1);
    return ipaddr.IPv6.isValid(text) ? classifyIpv6(ipaddr.IPv6.parse(text)) : "forbidden";
  }
  // Dotted-decimal only: the URL parser has normalised every other IPv4 spelling to this one.
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return classifyIpv4(ipaddr.IPv4.parse(host));
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (FORBIDDEN_HOSTNAMES.has(host) || FORBIDDEN_SUFFIXES.some((suffix) => host.endsWith(suffix)))
    return "forbidden";
  return "public";
}

/**
 * ipaddr.js range names a tenant must not reach, besides loopback: "this network" (0.0.0.0 reaches the local host on
 * Linux), RFC 1918, CGNAT, link-local (169.254.169.254 metadata), multicast, broadcast, and the IETF-reserved and
 * test ranges.
 */
const FORBIDDEN_IPV4_RANGES: ReadonlySet<string> = new Set([
  "unspecified",
  "private",
  "carrierGradeNat",
  "linkLocal",
  "multicast",
  "broadcast",
  "reserved",
]);

/** The IPv6 counterparts: `::`, link-local, old site-local, unique local (fc00::/7) and multicast. */
const FORBIDDEN_IPV6_RANGES: ReadonlySet<string> = new Set([
  "unspecified",
  "linkLocal",
  "deprecatedSiteLocal",
  "uniqueLocal",
  "multicast",
]);

/** ::a.b.c.d, the deprecated IPv4-compatible form: ipaddr.js has no range for it, but it reaches a.b.c.d. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR("::/96");
/** 64:ff9b::/96, the well-known NAT64 prefix: it reaches the embedded IPv4 address through the translator. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

function classifyIpv4(address: ipaddr.IPv4): HostClass {
  const range = address.range();
  if (range === "loopback") return "loopback";
  return FORBIDDEN_IPV4_RANGES.has(range) ? "forbidden" : "public";
}

function classifyIpv6(address: ipaddr.IPv6): HostClass {
  const range = address.range();
  if (range === "loopback") return "loopback";
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible) reach the IPv4 address, so judge that instead.
  if (range === "ipv4Mapped" || address.match(IPV4_COMPATIBLE)) return classifyIpv4(embeddedIpv4(address));
  if (address.match(NAT64_WELL_KNOWN)) {
    return classifyIpv4(embeddedIpv4(address)) === "public" ? "public" : "forbidden";
  }
  // The rest of rfc6052 is 64:ff9b:1::/48, local-use NAT64, which may translate to private addresses.
  return FORBIDDEN_IPV6_RANGES.has(range) || range === "rfc6052" ? "forbidden" : "public";
}

/** The IPv4 address in the last 32 bits. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = address.toByteArray().slice(12);
  return new ipaddr.IPv4(bytes);
}
