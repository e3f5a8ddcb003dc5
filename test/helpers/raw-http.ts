/**
 * HTTP over a bare TCP socket, for what a well-behaved client library refuses to send: huge or
 * malformed heads, lying Content-Lengths, invalid bytes, slow or stalled bodies.
 */
import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connect until the whole response was read. */
  ms: number;
}

/** Parses one HTTP/1.1 response out of `data`, or undefined when it is not complete yet. */
export function parseResponse(data: Buffer, ms = 0): RawResponse | undefined {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  const body = data.subarray(end + 4);
  if (body.length < length) return undefined;
  return { status: Number(statusLine!.split(" ")[1]), headers, body: body.subarray(0, length).toString("utf8"), ms };
}

export interface RawExchange {
  socket: Socket;
  /** Resolves with the first complete response, or rejects when the socket closes without one. */
  response: Promise<RawResponse>;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
}

/** Opens a connection, writes `head` (and nothing more), and collects the answer. */
export function openRaw(port: number, head: Buffer | string, timeoutMs = 10_000): RawExchange {
  const socket = connect({ host: "127.0.0.1", port });
  const startedAt = Date.now();
  let data = Buffer.alloc(0);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const response = new Promise<RawResponse>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const parsed = parseResponse(data, Date.now() - startedAt);
      if (parsed) {
        clearTimeout(timer);
        resolve(parsed);
      }
    });
    socket.once("close", () => {
      clearTimeout(timer);
      reject(new Error(`connection closed without a complete response (${data.length} bytes: ${data.subarray(0, 200).toString("latin1")})`));
    });
    socket.on("error", () => {});
  });
  response.catch(() => {});
  socket.write(head);
  return { socket, response, closed };
}

/** One request, one response, connection closed. */
export async function rawRequest(port: number, request: Buffer | string, timeoutMs?: number): Promise<RawResponse> {
  const exchange = openRaw(port, request, timeoutMs);
  try {
    return await exchange.response;
  } finally {
    exchange.socket.destroy();
  }
}

/** A request head with CRLFs. */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\n${Object.entries({ host: "127.0.0.1", ...headers }).map(([k, v]) => `${k}: ${v}`).join("\r\n")}\r\n\r\n`;
}
