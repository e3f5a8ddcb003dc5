/**
 * The SSRF guard for webhook targets (SPEC §6). A target is refused when any address its host
 * resolves to is not public: loopback, private, link-local (cloud metadata included), CGNAT,
 * multicast, unspecified, reserved, benchmarking and documentation ranges, IPv6 ULA and
 * site-local, and IPv4 hidden inside IPv6 (IPv4-mapped, NAT64, 6to4) when the IPv4 is refused.
 * It runs at intake (400) and again right before every delivery, whose connection is then
 * pinned to the address checked here, so DNS rebinding cannot swap it in between.
 */
import { BlockList, isIP } from "node:net";
import { lookup as dnsLookup } from "node:dns/promises";

type Family = "ipv4" | "ipv6";

/** Labelled ranges; the label is what a refused caller is told. */
const RANGES: Array<[label: string, family: Family, cidrs: string[]]> = [
  ["an unspecified (\"this network\") address", "ipv4", ["0.0.0.0/8"]],
  ["a private address", "ipv4", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]],
  ["a carrier-grade NAT address", "ipv4", ["100.64.0.0/10"]],
  ["a loopback address", "ipv4", ["127.0.0.0/8"]],
  ["a link-local address (cloud metadata lives here)", "ipv4", ["169.254.0.0/16"]],
  ["a reserved address", "ipv4", ["192.0.0.0/24", "192.88.99.0/24", "240.0.0.0/4"]],
  ["a documentation address", "ipv4", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]],
  ["a benchmarking address", "ipv4", ["198.18.0.0/15"]],
  ["a multicast address", "ipv4", ["224.0.0.0/4"]],
  ["an unspecified address", "ipv6", ["::/128"]],
  ["a loopback address", "ipv6", ["::1/128"]],
  ["a reserved address", "ipv6", ["::/96", "::ffff:0:0:0/96", "100::/64", "64:ff9b:1::/48", "2001::/23", "5f00::/16"]],
  ["a documentation address", "ipv6", ["2001:db8::/32", "3fff::/20"]],
  ["a unique local (private) address", "ipv6", ["fc00::/7"]],
  ["a link-local address", "ipv6", ["fe80::/10"]],
  ["a site-local address", "ipv6", ["fec0::/10"]],
  ["a multicast address", "ipv6", ["ff00::/8"]],
];

const BLOCKS = RANGES.map(([label, family, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split("/") as [string, string];
    list.addSubnet(network, Number(prefix), family);
  }
  return { label, family, list };
});

const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet("2000::", 3, "ipv6");

/** Why `ip` may not be a webhook target, or undefined when it is a public address. */
export function refusedBecause(ip: string): string | undefined {
  if (ip.includes("%")) return "a scoped (link-local) address";
  const version = isIP(ip);
  if (version === 4) return BLOCKS.find((b) => b.family === "ipv4" && b.list.check(ip, "ipv4"))?.label;
  if (version !== 6) return "not an IP address";
  const words = ipv6Words(ip);
  const embedded = embeddedIpv4(words);
  if (embedded) {
    const reason = refusedBecause(embedded.ipv4);
    return reason && `${reason} (${embedded.ipv4} inside ${embedded.form} ${ip})`;
  }
  const blocked = BLOCKS.find((b) => b.family === "ipv6" && b.list.check(ip, "ipv6"));
  if (blocked) return blocked.label;
  return GLOBAL_UNICAST_V6.check(ip, "ipv6") ? undefined : "not a global unicast address";
}

/** IPv4 carried inside an IPv6 address, where the IPv6 form only wraps it. */
function embeddedIpv4(words: number[]): { ipv4: string; form: string } | undefined {
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return { ipv4: v4(words[6]!, words[7]!), form: "the IPv4-mapped address" };
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return { ipv4: v4(words[6]!, words[7]!), form: "the NAT64 address" };
  if (words[0] === 0x2002) return { ipv4: v4(words[1]!, words[2]!), form: "the 6to4 address" };
  return undefined;
}

/** The eight 16-bit words of a valid IPv6 address (with `::` and a dotted-quad tail). */
function ipv6Words(ip: string): number[] {
  // A dotted-quad tail is two words written in decimal: rewrite it as hex first.
  const text = ip.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((w) => parseInt(w, 16)));
  const [head = "", rest] = text.split("::");
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type TargetVerdict =
  | { kind: "allowed"; hostname: string; addresses: ResolvedAddress[] }
  | { kind: "refused"; reason: string }
  /**
   * The host name did not resolve; not a policy refusal. `retryable` when the lookup timed out or
   * the resolver failed for now (EAI_AGAIN), rather than answering that the name does not exist.
   */
  | { kind: "unresolved"; reason: string; retryable: boolean };

export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

/** The operating system resolver (getaddrinfo, /etc/hosts included), as connections use it. */
export const systemLookup: Lookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** Lookup failures that say nothing about the name: the resolver may answer it later. */
const RETRYABLE_LOOKUP_ERRORS = new Set(["ETIMEOUT", "EAI_AGAIN", "ESERVFAIL", "ECONNREFUSED", "ECANCELLED"]);

/** How long a webhook host's lookup may take before the guard gives up. */
export const DNS_LOOKUP_TIMEOUT_MS = 3000;

export interface GuardOptions {
  allowPrivateNetworks: boolean;
  /** Give up resolving after this long. */
  timeoutMs?: number;
  lookup?: Lookup;
}

/** Resolves the URL's host and checks every address it resolves to. */
export async function checkWebhookTarget(url: string, options: GuardOptions): Promise<TargetVerdict> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: "refused", reason: "is not an absolute URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { kind: "refused", reason: "must be an http or https URL" };
  if (parsed.username || parsed.password) return { kind: "refused", reason: "must not carry credentials" };
  // WHATWG URL has already normalised odd IPv4 spellings (2130706433, 0x7f.1) to dotted quads.
  const hostname = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: ResolvedAddress[];
  if (isIP(hostname)) {
    addresses = [{ address: hostname, family: isIP(hostname) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await withTimeout((options.lookup ?? systemLookup)(hostname), options.timeoutMs ?? DNS_LOOKUP_TIMEOUT_MS);
    } catch (error) {
      const code = (error as { code?: string }).code;
      return { kind: "unresolved", reason: `host ${hostname} does not resolve (${code ?? String(error)})`, retryable: code === undefined || RETRYABLE_LOOKUP_ERRORS.has(code) };
    }
    if (addresses.length === 0) return { kind: "unresolved", reason: `host ${hostname} has no addresses`, retryable: false };
  }
  if (!options.allowPrivateNetworks) {
    for (const { address } of addresses) {
      const reason = refusedBecause(address);
      if (reason) {
        const what = address === hostname ? `${address} is ${reason}` : `${hostname} resolves to ${address}, ${reason}`;
        return { kind: "refused", reason: `${what}; webhook targets must be public addresses` };
      }
    }
  }
  return { kind: "allowed", hostname, addresses };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error("DNS timeout"), { code: "ETIMEOUT" })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
