/**
 * SSRF guard for outbound webhook targets, applied when an endpoint is registered and again before each delivery.
 *
 * It judges the URL only. A public hostname whose DNS later answers with a private address (DNS rebinding) cannot be
 * caught here: Workers have no resolver API, and `fetch` resolves on its own after any check we could make. What
 * mitigates it: Workers' `fetch` egresses from Cloudflare's network, which cannot reach our private networks or a cloud
 * metadata service; deliveries use `redirect: "manual"` and never follow a `Location` without checking it here; and a
 * Node-hosted sender must pin the checked address in its socket `lookup` rather than trust a second resolution.
 */

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
    const groups = parseIpv6(host.slice(1, -1));
    return groups ? classifyIpv6(groups) : "forbidden";
  }
  const ipv4 = parseIpv4(host);
  if (ipv4 !== undefined) return classifyIpv4(ipv4);
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (FORBIDDEN_HOSTNAMES.has(host) || FORBIDDEN_SUFFIXES.some((suffix) => host.endsWith(suffix)))
    return "forbidden";
  return "public";
}

/** Dotted-decimal only: the URL parser has normalised every other IPv4 spelling to this one. */
function parseIpv4(host: string): number | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!match) return undefined;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

/** [base, prefix length]: ranges a tenant must not reach, besides loopback. */
const FORBIDDEN_IPV4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["169.254.0.0", 16], // link-local, including 169.254.169.254 metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
];

function isInIpv4Range(address: number, base: string, prefix: number): boolean {
  const baseValue = parseIpv4(base) ?? 0;
  const size = 2 ** (32 - prefix);
  return Math.floor(address / size) === Math.floor(baseValue / size);
}

function classifyIpv4(address: number): HostClass {
  if (isInIpv4Range(address, "127.0.0.0", 8)) return "loopback";
  return FORBIDDEN_IPV4.some(([base, prefix]) => isInIpv4Range(address, base, prefix))
    ? "forbidden"
    : "public";
}

/** Eight 16-bit groups from the parser's canonical form (hex groups, at most one `::`, no dotted tail). */
function parseIpv6(text: string): number[] | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const toGroups = (part: string | undefined): number[] =>
    part ? part.split(":").map((group) => Number.parseInt(group, 16)) : [];
  const head = toGroups(halves[0]);
  const tail = toGroups(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? groups
    : undefined;
}

function classifyIpv6(groups: number[]): HostClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embeddedIpv4 = g6 * 65_536 + g7;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0 && g6 === 0 && g7 === 1) return "loopback"; // ::1
  if (upperZero && g5 === 0 && g6 === 0 && g7 === 0) return "forbidden"; // ::
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (deprecated compatible) reach the IPv4 address, so judge that instead.
  if (upperZero && (g5 === 0xffff || g5 === 0)) return classifyIpv4(embeddedIpv4);
  // 64:ff9b::/96 (NAT64) also reaches the embedded IPv4 address through the translator.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyIpv4(embeddedIpv4) === "public" ? "public" : "forbidden";
  }
  if ((g0 & 0xfe00) === 0xfc00) return "forbidden"; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return "forbidden"; // link-local, old site-local
  if ((g0 & 0xff00) === 0xff00) return "forbidden"; // multicast
  return "public";
}
