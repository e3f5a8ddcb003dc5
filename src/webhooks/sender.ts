/**
 * One webhook POST, made only to an address the guard has just approved: the connection's DNS
 * lookup is pinned to that address (TLS still verifies the host name), and redirects are
 * never followed, so neither a rebinding DNS answer nor a 30x can point the request elsewhere.
 */
import type { LookupAddress } from "node:dns";
import { Agent, request } from "undici";
import { hardTimeout } from "../lib/hard-timeout.ts";
import type { ResolvedAddress } from "./address-guard.ts";
import { describeHttpCall, injectTraceParent, type Span } from "../telemetry/spans.ts";

export interface SendResult {
  httpStatus: number;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that answers the approved address whatever the host name. */
function pinnedLookup(pinned: ResolvedAddress) {
  return (_hostname: string, options: { all?: boolean } | LookupCallback, callback?: LookupCallback) => {
    const done = (typeof options === "function" ? options : callback) as LookupCallback;
    if (typeof options === "object" && options.all) done(null, [{ address: pinned.address, family: pinned.family }]);
    else done(null, pinned.address, pinned.family);
  };
}

/**
 * Sends; resolves with the status once the whole answer has arrived, rejects on network errors
 * and timeout. The delivery's span, if given, goes with it and records the exchange.
 */
export async function sendWebhook(
  url: string,
  pinned: ResolvedAddress,
  signed: { body: string; headers: Record<string, string> },
  timeoutMs: number,
  options: { stop?: AbortSignal; span?: Span } = {},
): Promise<SendResult> {
  const agent = new Agent({ connect: { lookup: pinnedLookup(pinned), timeout: timeoutMs } });
  const deadline = hardTimeout(timeoutMs, options.stop);
  try {
    const response = await request(url, {
      method: "POST",
      dispatcher: agent,
      // The delivery's span goes with it, in the item's trace (SPEC §17).
      headers: injectTraceParent({ ...signed.headers, "user-agent": "work-item-api-webhooks/1" }, options.span),
      body: signed.body,
      signal: deadline.signal,
    });
    // The status line alone is no answer: a receiver that sends 200 and then trickles its body
    // has not finished. Only an answer whose last byte arrives before the deadline counts; its
    // bytes are of no use to us and are dropped as they come.
    for await (const chunk of response.body) void chunk;
    // Not the URL: an integrator's webhook URL may carry a token in its path or query.
    describeHttpCall(options.span, "POST", url, response.statusCode, { withPath: false });
    deadline.signal.throwIfAborted();
    return { httpStatus: response.statusCode };
  } finally {
    deadline.clear();
    await agent.destroy();
  }
}
