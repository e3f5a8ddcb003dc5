/** A local webhook receiver on 127.0.0.1 that records every request and answers as told. */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { waitUntil } from "./waiting.ts";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have come; `timeoutMs` defaults to waitUntil's hang timeout. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * A status, or a status with headers and a delay before it; `trickleMs` sends the status line at
 * once and then one byte of body every `trickleMs`, never ending it.
 */
export type Answer = number | { status: number; headers?: Record<string, string>; delayMs?: number; trickleMs?: number };

/** `answer(index)` gives the status for the index-th request (0-based), optional headers and delay. */
export async function startReceiver(answer: (index: number) => Answer = () => 200): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const chosen = answer(requests.length);
      const { status, headers = {}, delayMs = 0, trickleMs } = typeof chosen === "number" ? { status: chosen } : chosen;
      requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), status });
      if (trickleMs !== undefined) {
        response.writeHead(status, headers).flushHeaders();
        const trickle = setInterval(() => response.write("."), trickleMs);
        response.on("close", () => clearInterval(trickle));
        return;
      }
      const timer = setTimeout(() => response.writeHead(status, headers).end(), delayMs);
      response.on("close", () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    waitForRequests: (count, timeoutMs) => waitUntil(`${count} webhook request(s)`, () => (requests.length >= count ? requests : undefined), timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
