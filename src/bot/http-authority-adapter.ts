/**
 * The `http` authority adapter: files items with an Authority over HTTP (undici), sending the
 * work item id as `Idempotency-Key`. The built-in simulator is reached through this same code.
 */
import { Agent, request } from "undici";
import {
  AuthorityProtocolError,
  AuthorityUnavailableError,
  IDEMPOTENCY_KEY_HEADER,
  REGISTRATIONS_PATH,
  type AuthorityAdapter,
  type AuthorityDecision,
  type AuthoritySubmission,
  type FieldReason,
  type RegistrationRequest,
} from "../authority/protocol.ts";

export interface HttpAuthorityOptions {
  /** e.g. https://authority.example; the registrations path is appended. */
  baseUrl: string;
  /** One call, connect to last body byte. */
  timeoutMs: number;
}

/** Statuses that say "not now" rather than "no". */
const TRANSIENT_STATUS = new Set([408, 425, 429]);

export function createHttpAuthorityAdapter(options: HttpAuthorityOptions): AuthorityAdapter {
  const url = `${options.baseUrl.replace(/\/+$/, "")}${REGISTRATIONS_PATH}`;
  const agent = new Agent({ connect: { timeout: options.timeoutMs }, keepAliveTimeout: 10_000 });

  return {
    name: "http",
    async submit(submission: AuthoritySubmission): Promise<AuthorityDecision> {
      let status: number;
      let text: string;
      try {
        const response = await request(url, {
          method: "POST",
          dispatcher: agent,
          headers: { "content-type": "application/json", [IDEMPOTENCY_KEY_HEADER]: submission.idempotencyKey },
          body: JSON.stringify({ workType: submission.workType, request: submission.request } satisfies RegistrationRequest),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        status = response.statusCode;
        text = await response.body.text();
      } catch (error) {
        throw new AuthorityUnavailableError(`the Authority did not answer: ${describe(error)}`, { cause: error });
      }
      if (status >= 500 || TRANSIENT_STATUS.has(status)) {
        throw new AuthorityUnavailableError(`the Authority answered ${status}`);
      }
      const body = parseJson(text);
      if (status === 200 || status === 201) {
        if (typeof body?.registrationNumber === "string" && typeof body.registeredAt === "string") {
          return { kind: "accepted", registrationNumber: body.registrationNumber, registeredAt: new Date(body.registeredAt).toISOString() };
        }
        throw new AuthorityProtocolError(`the Authority answered ${status} without a registration`);
      }
      if (status === 422) {
        return {
          kind: "rejected",
          message: typeof body?.message === "string" ? body.message : "The Authority rejected the item.",
          reasons: Array.isArray(body?.reasons) ? body.reasons.filter(isFieldReason) : [],
        };
      }
      throw new AuthorityProtocolError(`the Authority answered ${status}${typeof body?.message === "string" ? `: ${body.message}` : ""}`);
    },
    close: () => agent.close(),
  };
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
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
