/**
 * One catalogue of every error the API can answer, and one handler that turns anything thrown
 * into RFC 9457 problem details. 5xx answers never carry internals: no stack, SQL or secret.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { StoreUnavailableError } from "./store/errors.ts";
import { requestTraceId } from "./telemetry/request-span.ts";

export const errorCatalogue = {
  VALIDATION_FAILED: { status: 400, title: "One or more validation errors occurred." },
  MALFORMED_REQUEST: { status: 400, title: "The request could not be read." },
  UNAUTHORIZED: { status: 401, title: "Unauthorized" },
  FORBIDDEN: { status: 403, title: "Forbidden" },
  NOT_FOUND: { status: 404, title: "Not Found" },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method Not Allowed" },
  REQUEST_TIMEOUT: { status: 408, title: "Request Timeout" },
  STATE_CONFLICT: { status: 409, title: "The resource is not in a state that allows this." },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, title: "A request with this Idempotency-Key is still in flight." },
  PAYLOAD_TOO_LARGE: { status: 413, title: "Payload Too Large" },
  URI_TOO_LONG: { status: 414, title: "URI Too Long" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: "Unsupported Media Type" },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: "This Idempotency-Key was used with a different request body." },
  RATE_LIMITED: { status: 429, title: "Too Many Requests" },
  HEADERS_TOO_LARGE: { status: 431, title: "Request Header Fields Too Large" },
  INTERNAL: { status: 500, title: "Internal Server Error" },
  STORE_UNAVAILABLE: { status: 503, title: "Service Unavailable" },
  LOOKUP_UNAVAILABLE: { status: 503, title: "Service Unavailable" },
  SHUTTING_DOWN: { status: 503, title: "Service Unavailable" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** Field path -> messages, the shape of ASP.NET's ValidationProblemDetails.errors. */
export type FieldErrors = Record<string, string[]>;

export interface ApiErrorOptions {
  errors?: FieldErrors;
  /** A machine-readable reason beside the catalogue's type, e.g. a 409's ORIGINAL_CLOSED (SPEC §15). */
  reason?: string;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error the API answers on purpose. Anything else thrown becomes a bare 500. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly title: string;
  readonly errors: FieldErrors | undefined;
  readonly reason: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: ApiErrorOptions = {},
  ) {
    super(detail, { cause: options.cause });
    this.status = errorCatalogue[code].status;
    this.title = errorCatalogue[code].title;
    this.errors = options.errors;
    this.reason = options.reason;
    this.headers = options.headers ?? {};
  }
}

const VALIDATION_DETAIL = "See errors for every problem found in the request.";

/** A 400 listing every problem found, by field path. */
export const validationError = (errors: FieldErrors) => new ApiError("VALIDATION_FAILED", VALIDATION_DETAIL, { errors });

export const problemTypeFor = (code: ErrorCode) => `urn:work-item-api:problem:${code.toLowerCase().replace(/_/g, "-")}`;

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  traceId: string;
  code?: string;
  errors?: FieldErrors;
}

export function problemFor(error: ApiError, request: FastifyRequest): ProblemDetails {
  const problem: ProblemDetails = {
    type: problemTypeFor(error.code),
    title: error.title,
    status: error.status,
    detail: error.detail,
    instance: request.url.split("?")[0] ?? request.url,
    // With tracing on, the W3C trace id (SPEC §17); else the request id of the log line.
    traceId: requestTraceId(request) ?? String(request.id),
  };
  if (error.reason !== undefined) problem.code = error.reason;
  // Every 400 is a ValidationProblemDetails, as ASP.NET answers a body it cannot read: `$` is the body.
  if (error.errors) problem.errors = error.errors;
  else if (error.status === 400) problem.errors = { $: [error.detail] };
  return problem;
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type("application/problem+json; charset=utf-8").send(problemFor(error, reply.request));
}

/** Maps Fastify's and the parsers' own errors to the catalogue. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) {
    return new ApiError("STORE_UNAVAILABLE", "The store is unavailable; retry shortly.", { headers: { "retry-after": "2" } });
  }
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown };
  if (fastifyError.validation) {
    return validationError(fieldErrorsFromValidation(fastifyError as FastifyError));
  }
  switch (fastifyError.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("PAYLOAD_TOO_LARGE", "The request body exceeds the size limit.");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError("MALFORMED_REQUEST", "The body is empty; send a JSON object.");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ApiError("MALFORMED_REQUEST", "Content-Length does not match the body.");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("MALFORMED_REQUEST", "The body is not valid JSON.");
  }
  const status = fastifyError.statusCode;
  if (status === 400 && /prototype|constructor/i.test(fastifyError.message ?? "")) {
    return new ApiError("MALFORMED_REQUEST", "The body contains a forbidden property name (__proto__ or constructor.prototype).");
  }
  if (error instanceof SyntaxError || (status === 400 && /JSON/i.test(fastifyError.message ?? ""))) {
    return new ApiError("MALFORMED_REQUEST", "The body is not valid JSON.");
  }
  if (status === 413) return new ApiError("PAYLOAD_TOO_LARGE", "The request body exceeds the size limit.");
  if (status === 415) return new ApiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
  if (status !== undefined && status >= 400 && status < 500) {
    return new ApiError("MALFORMED_REQUEST", "The request could not be read.");
  }
  return new ApiError("INTERNAL", "An unexpected error occurred. Quote the traceId when you report it.", { cause: error });
}

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
  /** Present because Ajv runs with `verbose`: the value that failed. */
  data?: unknown;
  /**
   * Present because Ajv runs with `verbose`. A schema may carry its own `errorMessage`: a text
   * for its type, pattern and `not`, or a text per keyword (`{ minProperties: "…" }`).
   */
  parentSchema?: { errorMessage?: string | Record<string, string> };
}

/** Turns Ajv's errors into `{ "productName.sendValue": ["…"] }`, every problem at once. */
export function fieldErrorsFromValidation(error: FastifyError): FieldErrors {
  // A Map, not an object literal: field paths come from the client and may be "constructor",
  // "hasOwnProperty" or "__proto__", which an object literal already "has".
  const errors = new Map<string, string[]>();
  const context = (error as { validationContext?: string }).validationContext;
  for (const item of (error.validation ?? []) as AjvLikeError[]) {
    const segments = (item.instancePath ?? "").split("/").filter(Boolean).map(decodePointer);
    if (item.keyword === "required" && typeof item.params?.missingProperty === "string") {
      segments.push(item.params.missingProperty);
    }
    if (item.keyword === "additionalProperties" && typeof item.params?.additionalProperty === "string") {
      segments.push(item.params.additionalProperty);
    }
    const path = segments.length > 0 ? segments.join(".") : context === "body" ? "$" : (context ?? "$");
    const message = messageFor(item, context === "body");
    const list = errors.get(path) ?? [];
    errors.set(path, list);
    if (!list.includes(message)) list.push(message);
  }
  return Object.fromEntries(errors);
}

const decodePointer = (segment: string) => segment.replace(/~1/g, "/").replace(/~0/g, "~");

const withArticle = (noun: string) => `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`;

/** What a JSON value is, as a message names it: "an array", "an object", "a string", "null", … */
function shapeOf(value: unknown, expected: string[]): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  // A number where an integer belongs is shown: "must be an integer, not 1.5".
  if (typeof value === "number") return expected.includes("integer") ? String(value) : "a number";
  return withArticle(typeof value);
}

/**
 * A type error names the expected shape and, in a body, the shape that came ("must be an object,
 * not an array"): a body part of the wrong shape must say so (SPEC §24). Text parts (query, path,
 * headers) are always text, so there it names the expected shape alone.
 */
function typeMessage(item: AjvLikeError, inBody: boolean): string {
  const type = item.params?.type;
  const expected = (Array.isArray(type) ? type.map(String) : String(type).split(",")).filter((name) => name !== "");
  const wanted = `must be ${expected.map((name) => (name === "null" ? "null" : withArticle(name))).join(" or ")}`;
  return inBody && "data" in item ? `${wanted}, not ${shapeOf(item.data, expected)}` : wanted;
}

/** The schema's own message for this error, if it has one. */
function customMessage(item: AjvLikeError): string | undefined {
  const custom = item.parentSchema?.errorMessage;
  if (typeof custom === "string") return item.keyword === "type" || item.keyword === "pattern" || item.keyword === "not" ? custom : undefined;
  const forKeyword = custom && item.keyword !== undefined ? custom[item.keyword] : undefined;
  return typeof forKeyword === "string" ? forKeyword : undefined;
}

const plural = (count: unknown, noun: string, nouns: string) => `${String(count)} ${count === 1 ? noun : nouns}`;

function messageFor(item: AjvLikeError, inBody: boolean): string {
  const params = item.params ?? {};
  const custom = customMessage(item);
  if (custom) return custom;
  switch (item.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a known property";
    case "minLength":
      return params.limit === 1 ? "must not be empty" : `must be at least ${String(params.limit)} characters`;
    case "maxLength":
      return `must be at most ${String(params.limit)} characters`;
    case "format":
      return params.format === "iso-date-time" || params.format === "date-time"
        ? "must be an ISO 8601 date-time, e.g. 2026-11-21T14:03:12Z"
        : `must be a valid ${String(params.format)}`;
    case "enum":
      return `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "minItems":
      return `must have at least ${plural(params.limit, "item", "items")}`;
    case "maxItems":
      return `must have at most ${plural(params.limit, "item", "items")}`;
    case "minProperties":
      return `must have at least ${plural(params.limit, "property", "properties")}`;
    case "maxProperties":
      return `must have at most ${plural(params.limit, "property", "properties")}`;
    case "minimum":
      return `must be ≥ ${String(params.limit)}`;
    case "maximum":
      return `must be ≤ ${String(params.limit)}`;
    case "type":
      return typeMessage(item, inBody);
    default:
      return item.message ?? "is invalid";
  }
}

/** Installs the one error handler and the not-found/405 handler. */
export function installErrorHandling(app: FastifyInstance, allowedMethodsFor: (url: string) => string[]): void {
  app.setErrorHandler((error, request, reply) => {
    let apiError: ApiError;
    try {
      apiError = toApiError(error);
    } catch (mappingError) {
      // Never let Fastify's fallback answer: it would show the internal message.
      apiError = new ApiError("INTERNAL", "An unexpected error occurred. Quote the traceId when you report it.", { cause: mappingError });
    }
    if (apiError.status >= 500) {
      request.log.error({ err: apiError.cause ?? error, code: apiError.code }, "request failed");
    } else {
      request.log.info({ code: apiError.code, detail: apiError.detail }, "request refused");
    }
    return sendProblem(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethodsFor(request.url);
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      return sendProblem(reply, new ApiError("METHOD_NOT_ALLOWED", `${request.method} is not allowed here; use ${allowed.join(" or ")}.`));
    }
    return sendProblem(reply, new ApiError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`));
  });
}
