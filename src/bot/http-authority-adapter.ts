/**
 * The `http` authority adapter: files items with an Authority over HTTP (undici), sending the
 * work item id as `Idempotency-Key`, and asks for decisions by application number. The
 * built-in simulator is reached through this same code.
 *
 * What the Authority answers is checked before it is believed: a body that is not JSON, lacks
 * a field or names an unknown status is a transient failure (the next call may be sound), and
 * so is any 5xx, 408, 425 or 429.
 */
import { Agent, request } from "undici";
import { hardTimeout } from "../lib/hard-timeout.ts";
import { describeHttpCall, injectTraceParent, type Span } from "../telemetry/spans.ts";
import {
  AuthorityMisconfiguredError,
  AuthorityProtocolError,
  AuthorityTimeoutError,
  AuthorityUnavailableError,
  followUpCalls,
  FOLLOW_UP_WIRE,
  MISCONFIGURED_STATUSES,
  IDEMPOTENCY_KEY_HEADER,
  REGISTRATIONS_PATH,
  type FollowUpAnswer,
  type ApplicationStatus,
  type AuthorityAdapter,
  type AuthoritySubmission,
  type FieldReason,
  type RegistrationRequest,
  type StatusAnswer,
  type SubmitAnswer,
} from "../authority/protocol.ts";

/** The adapter's name: the key of the circuit breaker every process shares (SPEC §10). */
export const HTTP_AUTHORITY_NAME = "http";

export interface HttpAuthorityOptions {
  /** e.g. https://authority.example; the registrations path is appended. */
  baseUrl: string;
  /** One call, connect to last body byte: then the attempt has failed. */
  timeoutMs: number;
  /** How long a call that timed out may keep its connection for the Authority's late answer; at least `timeoutMs`. */
  abandonMs?: number;
}

/** Statuses that say "not now" rather than "no". */
const TRANSIENT_STATUS = new Set([408, 425, 429]);

type Body = Record<string, unknown> | undefined;

export function createHttpAuthorityAdapter(options: HttpAuthorityOptions): AuthorityAdapter {
  const url = `${options.baseUrl.replace(/\/+$/, "")}${REGISTRATIONS_PATH}`;
  const agent = new Agent({ connect: { timeout: options.timeoutMs }, keepAliveTimeout: 10_000 });
  const abandonMs = Math.max(options.timeoutMs, options.abandonMs ?? options.timeoutMs);

  /**
   * One call; transient trouble is thrown, any other answer returned with its parsed body. At
   * `timeoutMs` the attempt fails with AuthorityTimeoutError, but the exchange goes on until the
   * Authority answers or `abandonMs` has passed: closing the connection would not stop the
   * Authority's work, only hide it from the capacity limit (SPEC §20).
   */
  async function call(target: string, init: { method: "GET" | "POST"; headers?: Record<string, string>; body?: string }, span: Span | undefined): Promise<{ status: number; body: Body }> {
    const abandon = hardTimeout(abandonMs);
    const exchange = (async () => {
      // The call's span (the bot's, in the item's trace) goes with it as `traceparent` (SPEC §17).
      const response = await request(target, { ...init, headers: injectTraceParent({ ...init.headers }, span), dispatcher: agent, signal: abandon.signal });
      describeHttpCall(span, init.method, target, response.statusCode);
      return { status: response.statusCode, text: await response.body.text() };
    })();
    const connectionEnded = exchange.then(
      () => undefined,
      () => undefined,
    );
    void connectionEnded.then(abandon.clear);
    const patience = hardTimeout(options.timeoutMs);
    const timedOut = new Promise<"timedOut">((resolve) => patience.signal.addEventListener("abort", () => resolve("timedOut"), { once: true }));
    let answer: { status: number; text: string } | "timedOut";
    try {
      answer = await Promise.race([exchange, timedOut]);
    } catch (error) {
      throw new AuthorityUnavailableError(`the Authority did not answer: ${describe(error)}`, { cause: error });
    } finally {
      patience.clear();
    }
    if (answer === "timedOut") throw new AuthorityTimeoutError(`the Authority did not answer within ${options.timeoutMs} ms`, connectionEnded);
    const { status, text } = answer;
    if (status >= 500 || TRANSIENT_STATUS.has(status)) throw new AuthorityUnavailableError(`the Authority answered ${status}`);
    return { status, body: parseJson(text) };
  }

  return {
    name: HTTP_AUTHORITY_NAME,

    async submit(submission: AuthoritySubmission, span?: Span): Promise<SubmitAnswer> {
      const payload: RegistrationRequest = { workType: submission.workType, request: submission.request };
      const { status, body } = await call(
        url,
        {
          method: "POST",
          headers: { "content-type": "application/json", [IDEMPOTENCY_KEY_HEADER]: submission.idempotencyKey },
          body: JSON.stringify(payload),
        },
        span,
      );
      if (status === 200 || status === 201 || status === 202) {
        if (typeof body?.applicationNumber === "string" && body.applicationNumber.length > 0) return { kind: "accepted", applicationNumber: body.applicationNumber };
        throw new AuthorityUnavailableError(`the Authority answered ${status} without an application number`);
      }
      if (status === 422) return rejected(body);
      if (MISCONFIGURED_STATUSES.has(status)) throw misconfigured(status, body, "submit");
      throw refused(status, body);
    },

    async status(applicationNumber: string, span?: Span): Promise<StatusAnswer> {
      const { status, body } = await call(`${url}/${encodeURIComponent(applicationNumber)}`, { method: "GET" }, span);
      if (status === 404) return { kind: "unknown" };
      if (MISCONFIGURED_STATUSES.has(status)) throw misconfigured(status, body, "status");
      if (status !== 200) throw refused(status, body);
      const answer = body as Partial<ApplicationStatus> | undefined;
      switch (answer?.status) {
        case "pending":
          return { kind: "pending" };
        case "registered": {
          const registeredAt = typeof answer.registeredAt === "string" ? Date.parse(answer.registeredAt) : NaN;
          if (typeof answer.registrationNumber === "string" && answer.registrationNumber.length > 0 && Number.isFinite(registeredAt)) {
            return { kind: "registered", registrationNumber: answer.registrationNumber, registeredAt: new Date(registeredAt).toISOString() };
          }
          throw new AuthorityUnavailableError("the Authority answered registered without a registration number and time");
        }
        case "rejected":
          return rejected(body);
        default:
          throw new AuthorityUnavailableError(`the Authority answered an unknown status ${JSON.stringify(answer?.status ?? null).slice(0, 100)}`);
      }
    },

    // Every kind alike: its payload posted to its path under the application.
    ...followUpCalls((kind, { idempotencyKey, applicationNumber, ...payload }, span) =>
      fileFollowUp(`${url}/${encodeURIComponent(applicationNumber)}${FOLLOW_UP_WIRE[kind].path}`, idempotencyKey, payload, span),
    ),

    // Destroyed, not closed: a call that timed out may still wait on its connection, for up to abandonMs.
    close: () => agent.destroy(),
  };

  /** A change or withdrawal: accepted, or rejected for good (an unknown application included). */
  async function fileFollowUp(target: string, idempotencyKey: string, payload: Record<string, unknown>, span: Span | undefined): Promise<FollowUpAnswer> {
    const { status, body } = await call(
      target,
      {
        method: "POST",
        headers: { "content-type": "application/json", [IDEMPOTENCY_KEY_HEADER]: idempotencyKey },
        body: JSON.stringify(payload),
      },
      span,
    );
    if (status === 200 || status === 201 || status === 202) return { kind: "accepted" };
    if (status === 422) return rejected(body);
    // A 404 names the application, as for status; the other refusals are ours to put right.
    if (status === 404) return { kind: "rejected", message: "The Authority does not know the application.", reasons: [] };
    if (MISCONFIGURED_STATUSES.has(status)) throw misconfigured(status, body, "follow-up");
    throw refused(status, body);
  }
}

function rejected(body: Body): { kind: "rejected"; message: string; reasons: FieldReason[] } {
  return {
    kind: "rejected",
    message: typeof body?.message === "string" ? body.message : "The Authority rejected the item.",
    reasons: Array.isArray(body?.reasons) ? body.reasons.filter(isFieldReason) : [],
  };
}

/** 401/403/404/405: the call cannot be right however often it is made (AUTHORITY_URL or the credentials). */
const misconfigured = (status: number, body: Body, call: "submit" | "status" | "follow-up") =>
  new AuthorityMisconfiguredError(
    status,
    `the Authority answered ${status} at ${call}${typeof body?.message === "string" ? `: ${body.message.slice(0, 200)}` : ""}; check AUTHORITY_URL and the Authority credentials`,
  );

/** Any other 4xx: the Authority refuses the call itself, and will again. */
const refused = (status: number, body: Body) =>
  new AuthorityProtocolError(`the Authority answered ${status}${typeof body?.message === "string" ? `: ${body.message.slice(0, 200)}` : ""}`);

function parseJson(text: string): Body {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const isFieldReason = (value: unknown): value is FieldReason =>
  typeof (value as FieldReason | null)?.field === "string" && typeof (value as FieldReason).message === "string";

/** The error code and message, never a stack: it is stored as the item's last_error. */
function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" ? `${code} ${message}` : message;
}
