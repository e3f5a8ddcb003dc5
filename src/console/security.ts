/**
 * What protects every console request: the session cookie, the cross-site check and the CSRF
 * token (SPEC §12.1), the form parser, and the headers every console answer carries.
 */
import { createHmac } from "node:crypto";
import cookie from "@fastify/cookie";
import csrfProtection from "@fastify/csrf-protection";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { unstorableText, unstorableTextError } from "../http/storable-text.ts";
import { serverKey } from "../lib/server-keys.ts";
import { actionBy, mayAct, REASON_MAX_LENGTH } from "../operators/roles.ts";
import { dueCalendarOf } from "../operators/work-item-list.ts";
import type { OperatorAction } from "../store/store.ts";
import type { Viewer } from "./layout.ts";

export const SESSION_COOKIE = "console_session";
const CSRF_COOKIE = "console_csrf";
const COOKIE_PATH = "/console";
/** A console form is a handful of short fields; anything bigger is not one of ours. */
const FORM_BODY_LIMIT = 16 * 1024;

/** Scripts and styles only from /console/assets; no framing, no forms posting elsewhere. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join("; ");

export const sessionCookieOptions = { path: COOKIE_PATH, httpOnly: true, sameSite: "strict", secure: "auto" } as const;

const signedIn = new WeakMap<FastifyRequest, Omit<Viewer, "csrfToken">>();

/** Cookies, CSRF, the form parser, the cross-site check and the security headers, for the console's scope only. */
export async function installConsoleSecurity(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Derived from the token signing key, so every process of one database signs cookies alike
  // without another secret to configure.
  const jwtKey = await serverKey(ctx.store, "jwt", ctx.config.jwtSecret);
  const derive = (purpose: string) => createHmac("sha256", jwtKey).update(purpose).digest("base64url");
  await app.register(cookie, { secret: derive("console-cookies") });
  await app.register(csrfProtection, {
    sessionPlugin: "@fastify/cookie",
    cookieKey: CSRF_COOKIE,
    cookieOpts: { ...sessionCookieOptions, signed: true },
    getToken: (request) => formField(request, "_csrf"),
    // Tokens are bound to the session: a CSRF cookie planted from another port of this host
    // (cookies do not isolate ports) is worthless without the victim's own session id.
    getUserInfo: csrfUserInfo,
    csrfOpts: { hmacKey: derive("console-csrf") },
  });

  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    // A null-prototype record: field names are the client's, "__proto__" included.
    const form: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of new URLSearchParams(String(body))) if (!(name in form)) form[name] = value;
    const errors = unstorableText(form);
    if (errors) done(unstorableTextError(errors), undefined);
    else done(null, form);
  });

  app.addHook("onRequest", async (request) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    refuseCrossSite(request);
  });

  app.addHook("onSend", async (_request, reply) => {
    reply.header("content-security-policy", CONTENT_SECURITY_POLICY);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "same-origin");
    reply.header("x-frame-options", "DENY");
  });
}

/**
 * SameSite=Strict does not stop a page on another port of this host (same-site), so a
 * state-changing request must come from this very origin: browsers send Sec-Fetch-Site and
 * Origin on every POST; a request with neither is no browser's and still needs the CSRF token.
 */
function refuseCrossSite(request: FastifyRequest): void {
  const fetchSite = request.headers["sec-fetch-site"];
  if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") {
    throw new ApiError("FORBIDDEN", "Cross-site requests may not change anything here.");
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`) {
    throw new ApiError("FORBIDDEN", "Requests from another origin may not change anything here.");
  }
}

/** What a CSRF token is bound to: the session cookie as sent, or "signed out" (the library refuses an empty one). */
export function csrfUserInfo(request: FastifyRequest): string {
  const sessionId = request.cookies[SESSION_COOKIE];
  return sessionId ? `session:${sessionId}` : "signed-out";
}

/** A CSRF token for the forms of this answer. */
export const csrfTokenFor = (request: FastifyRequest, reply: FastifyReply): string => reply.generateCsrf({ userInfo: csrfUserInfo(request) });

/** A field of the parsed form, or undefined (no form, or not that field). */
export function formField(request: FastifyRequest, name: string): string | undefined {
  const body = request.body;
  if (body === null || typeof body !== "object") return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** preHandler of every page but sign-in: the signed-in operator, or off to the sign-in page. */
export function requireSession(ctx: AppContext) {
  return async function sessionGuard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const sessionId = request.cookies[SESSION_COOKIE];
    const operator = sessionId ? await ctx.operatorAuth.bySession(sessionId) : undefined;
    if (!operator) {
      if (sessionId) reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
      await reply.redirect("/console/login", 303);
      return;
    }
    signedIn.set(request, { operator, timeZone: ctx.config.consoleTimeZone, calendar: dueCalendarOf(ctx.config) });
  };
}

/** The signed-in operator and a fresh CSRF token for the page's forms. */
export function viewerOf(request: FastifyRequest, reply: FastifyReply): Viewer {
  const session = signedIn.get(request);
  if (!session) throw new ApiError("UNAUTHORIZED", "Sign in first.");
  return { ...session, csrfToken: csrfTokenFor(request, reply) };
}

/**
 * The action of the operator behind a state-changing request: refuses a role that may only
 * read (403) and a missing or over-long reason (400).
 */
export function operatorAction(request: FastifyRequest): OperatorAction {
  const operator = signedIn.get(request)?.operator;
  if (!operator) throw new ApiError("UNAUTHORIZED", "Sign in first.");
  if (!mayAct(operator.role)) throw new ApiError("FORBIDDEN", `The ${operator.role} role may read but not change anything.`);
  const reason = formField(request, "reason")?.trim() ?? "";
  if (reason.length < 1 || reason.length > REASON_MAX_LENGTH) throw new ApiError("VALIDATION_FAILED", `Give a reason of 1 to ${REASON_MAX_LENGTH} characters.`);
  return actionBy(operator, reason);
}
