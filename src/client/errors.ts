/** The errors the SDK throws: an answer of the API, or no answer at all. */
import type { ProblemDetails } from "./types.ts";

/** The API answered with an error status; `problem` is its RFC 9457 body. */
export class WorkItemApiError extends Error {
  override name = "WorkItemApiError";
  readonly status: number;
  readonly problem: ProblemDetails;
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, problem: ProblemDetails) {
    const trace = problem.traceId ? ` (traceId ${problem.traceId})` : "";
    super(`${method} ${path} answered ${problem.status} ${problem.title}: ${problem.detail}${trace}`);
    this.status = problem.status;
    this.problem = problem;
    this.method = method;
    this.path = path;
  }

  /** e.g. `urn:work-item-api:problem:not-found` */
  get type(): string {
    return this.problem.type;
  }
  get title(): string {
    return this.problem.title;
  }
  get detail(): string {
    return this.problem.detail;
  }
  /** The server's request id; quote it when reporting a problem. */
  get traceId(): string {
    return this.problem.traceId;
  }
  /** Why, where a status has more than one reason: e.g. a 409's ORIGINAL_CLOSED (SPEC §15). */
  get code(): string | undefined {
    return this.problem.code;
  }
  /** Validation errors only: field path -> messages. */
  get errors(): Record<string, string[]> | undefined {
    return this.problem.errors;
  }
}

/** No answer after every retry: connection refused or reset, DNS failure, or a timeout. */
export class WorkItemNetworkError extends Error {
  override name = "WorkItemNetworkError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`${method} ${path} got no answer after ${attempts} attempt(s): ${describe(cause)}`, { cause });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

/** Builds the error of a non-2xx answer; bodies that are not problem details still give one. */
export async function errorFromResponse(method: string, path: string, response: Response): Promise<WorkItemApiError> {
  const text = await response.text().catch(() => "");
  let body: Partial<ProblemDetails> | undefined;
  if (/json/i.test(response.headers.get("content-type") ?? "")) {
    try {
      body = JSON.parse(text) as Partial<ProblemDetails>;
    } catch {
      body = undefined;
    }
  }
  const problem: ProblemDetails = {
    type: typeof body?.type === "string" ? body.type : "about:blank",
    title: typeof body?.title === "string" ? body.title : response.statusText || `HTTP ${response.status}`,
    status: response.status,
    detail: typeof body?.detail === "string" ? body.detail : text.slice(0, 500),
    instance: typeof body?.instance === "string" ? body.instance : path,
    traceId: typeof body?.traceId === "string" ? body.traceId : "",
  };
  if (typeof body?.code === "string") problem.code = body.code;
  if (body?.errors && typeof body.errors === "object") problem.errors = body.errors;
  return new WorkItemApiError(method, path, problem);
}
