/** One attempt of a request, as the SDK sends it; client.ts decides whether to repeat it. */

/** A request of the SDK, relative to the client's base URL. */
export interface RequestSpec {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the bearer token (every route but login and the operator routes). */
  auth: boolean;
}

/** Where and how a client sends its requests. */
export interface Connection {
  /** Ends with `/`, so a request's path keeps a path prefix of it. */
  baseUrl: string;
  fetch: typeof fetch;
  /** Per attempt, the whole answer included. */
  timeoutMs: number;
}

/** Sends `spec` once, with the bearer `token` when given; the answer read whole, or the error fetch threw. */
export async function attempt(connection: Connection, spec: RequestSpec, token: string | undefined, signal: AbortSignal | undefined): Promise<Response> {
  const url = new URL(spec.path, connection.baseUrl);
  for (const [name, value] of Object.entries(spec.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { accept: "application/json, text/plain;q=0.9, application/problem+json;q=0.8", ...spec.headers };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (spec.body !== undefined) headers["content-type"] = "application/json";
  // A plain timer, which the event loop holds until it fires: AbortSignal.timeout() inside
  // AbortSignal.any() can be garbage-collected first, and the call then never times out.
  const aborter = new AbortController();
  const timer = setTimeout(() => aborter.abort(new DOMException(`The operation was aborted due to timeout (${connection.timeoutMs} ms)`, "TimeoutError")), connection.timeoutMs);
  const stop = () => aborter.abort(signal?.reason);
  if (signal?.aborted) stop();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const response = await connection.fetch(url, {
      method: spec.method,
      headers,
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: aborter.signal,
    });
    // The timeout covers the whole answer, its last byte included, so the body is read here,
    // while the timer holds; every answer of this API is small.
    const body = await response.arrayBuffer();
    return new Response(body.byteLength === 0 ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}
