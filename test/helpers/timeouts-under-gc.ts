/**
 * Run with `node --expose-gc --import tsx`: makes each kind of outbound call this service and
 * its SDK make, against a loopback server that never finishes answering, while full garbage
 * collections run every few milliseconds, and prints one JSON line: how long each call took to
 * end. A timeout whose timer can be collected (Node issue 57736) would let a call run on.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { WorkItemClient } from "../../src/client/index.ts";
import { sendWebhook } from "../../src/webhooks/sender.ts";

const TIMEOUT_MS = Number(process.env.TIMEOUT_MS ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("run with --expose-gc");

/** Sends its status and headers at once, then a byte a second: an answer that never ends in time. */
function startTrickler(): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write("{");
    const timer = setInterval(() => response.write(" "), 1000);
    response.on("close", () => clearInterval(timer));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  const collecting = setInterval(() => collect!(), 5);
  try {
    await call();
  } catch {
    // Every call here is meant to fail; how long it took is the finding.
  } finally {
    clearInterval(collecting);
  }
  return Math.round(performance.now() - started);
}

const { server, url } = await startTrickler();
const adapter = createHttpAuthorityAdapter({ baseUrl: url, timeoutMs: TIMEOUT_MS, abandonMs: TIMEOUT_MS });
const client = new WorkItemClient({ baseUrl: url, apiKey: "wia_1_0000000000000000", secret: "s", timeoutMs: TIMEOUT_MS, maxRetries: 0 });
// As in the service: the dispatcher's and the caller's stop signals beside each timeout.
const stop = new AbortController();
const results: Record<string, number[]> = { webhook: [], authority: [], sdk: [] };
for (let round = 0; round < ROUNDS; round++) {
  results.webhook!.push(await timed(() => sendWebhook(`${url}/hook`, { address: "127.0.0.1", family: 4 }, { body: "{}", headers: {} }, TIMEOUT_MS, { stop: stop.signal })));
  results.authority!.push(await timed(() => adapter.status("A-1")));
  results.sdk!.push(await timed(() => client.health({ signal: stop.signal })));
}
await adapter.close();
server.closeAllConnections();
server.close();
console.log(JSON.stringify(results));
