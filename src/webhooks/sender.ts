/**
 * One webhook POST, made only to an address the guard has just approved: the connection's DNS
 * lookup is pinned to that address (TLS still verifies the host name), and redirects are
 * never followed, so neither a rebinding DNS answer nor a 30x can point the request elsewhere.
 */
import type { LookupAddress } from "node:dns";
import { Agent, request } from "undici";
import type { ResolvedAddress } from "./address-guard.ts";

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

/** Sends; resolves with the status for any HTTP answer, rejects on network errors and timeout. */
export async function sendWebhook(
  url: string,
  pinned: ResolvedAddress,
  signed: { body: string; headers: Record<string, string> },
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<SendResult> {
  const agent = new Agent({ connect: { lookup: pinnedLookup(pinned), timeout: timeoutMs } });
  try {
    const response = await request(url, {
      method: "POST",
      dispatcher: agent,
      headers: { ...signed.headers, "user-agent": "work-item-api-webhooks/1" },
      body: signed.body,
      signal: stop ? AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]) : AbortSignal.timeout(timeoutMs),
    });
    // The receiver's answer body is of no use to us; read a little and drop the connection.
    await response.body.dump({ limit: 65_536 });
    return { httpStatus: response.statusCode };
  } finally {
    await agent.destroy();
  }
}
