/**
 * AddWorkItemCreate over real HTTP with an Idempotency-Key, for load, crash and outage tests.
 * The body for a key is made once, so a retry with the same key sends the very same bytes.
 */
import { validWorkItem } from "./test-app.ts";

export interface AddAttempt {
  key: string;
  /** The HTTP status, or how the request failed without an answer. */
  status: number | "timeout" | "network";
  workItemId?: number;
  replayed?: boolean;
  retryAfter?: string;
  /** When the request was sent (ms since the epoch). */
  at: number;
}

const bodies = new Map<string, string>();
const bodyFor = (key: string) => bodies.get(key) ?? bodies.set(key, JSON.stringify(validWorkItem({ customerReference: key }))).get(key)!;

export const unanswered = (attempt: AddAttempt) => attempt.status === "network" || attempt.status === "timeout";

export async function addOverHttp(baseUrl: string, token: string, key: string): Promise<AddAttempt> {
  const at = Date.now();
  try {
    const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "idempotency-key": key },
      body: bodyFor(key),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json()) as { workItemId?: number };
    return {
      key,
      status: response.status,
      workItemId: body.workItemId,
      replayed: response.headers.get("idempotency-replayed") === "true",
      retryAfter: response.headers.get("retry-after") ?? undefined,
      at,
    };
  } catch (error) {
    return { key, status: (error as Error).name === "TimeoutError" ? "timeout" : "network", at };
  }
}
