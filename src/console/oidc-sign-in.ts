/**
 * GET /console/oidc/start and GET /console/oidc/callback (SPEC §19): operators sign in with the
 * company's identity provider; and the provider's half of sign-out. The protocol itself is
 * operators/oidc.ts (openid-client); this file keeps the flow in the browser and answers pages.
 *
 * The SameSite=Strict trap. The session cookie is SameSite=Strict (§12.1). The callback is reached
 * by a navigation that began on the provider's site, so the browser sends no Strict cookie with
 * it, nor with a redirect from it: a 303 to /console would arrive looking signed out, and send
 * the operator round again. So the callback answers 200 with a page that moves on to /console by
 * itself; that navigation starts on this site and carries the new session cookie. The flow's own
 * cookie has to come back from the provider's site, so it is SameSite=Lax, and it is also signed,
 * HttpOnly, sent to the callback only, ten minutes long, and cleared by the callback whatever
 * the outcome.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.ts";
import { OIDC_CALLBACK_PATH } from "../config-oidc.ts";
import { emailFromClaims, OidcSignInError, roleFromClaims, type OidcFailure, type OidcSignIn, type PendingSignIn } from "../operators/oidc.ts";
import { html } from "./html.ts";
import { barePage, movingOnPage } from "./layout.ts";
import { SESSION_COOKIE, sessionCookieOptions } from "./security.ts";
import { OIDC_START_PATH, sendSignInPage } from "./sign-in-page.ts";

const FLOW_COOKIE = "console_oidc_flow";
const FLOW_SECONDS = 600;
const flowCookieOptions = { path: OIDC_CALLBACK_PATH, httpOnly: true, sameSite: "lax", secure: "auto", signed: true, maxAge: FLOW_SECONDS } as const;
/** The ID token, kept only as the hint of the provider's sign-out, and sent only to /console/logout. */
const ID_TOKEN_COOKIE = "console_oidc_id_token";
/** Browsers drop a cookie over 4 KiB; a token that big (many groups) signs out without the hint. */
const ID_TOKEN_COOKIE_MAX = 3800;
const idTokenCookieOptions = { ...sessionCookieOptions, path: "/console/logout" } as const;

interface Flow extends PendingSignIn {
  startedAt: number;
}

function readFlow(request: FastifyRequest): PendingSignIn | undefined {
  const raw = request.cookies[FLOW_COOKIE];
  if (raw === undefined) return undefined;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return undefined;
  try {
    const flow = JSON.parse(Buffer.from(unsigned.value, "base64url").toString("utf8")) as Partial<Flow>;
    const fresh = typeof flow.startedAt === "number" && Date.now() - flow.startedAt < FLOW_SECONDS * 1000;
    if (!fresh || typeof flow.state !== "string" || typeof flow.nonce !== "string" || typeof flow.codeVerifier !== "string") return undefined;
    return { state: flow.state, nonce: flow.nonce, codeVerifier: flow.codeVerifier };
  } catch {
    return undefined;
  }
}

const encodeFlow = (pending: PendingSignIn): string => Buffer.from(JSON.stringify({ ...pending, startedAt: Date.now() } satisfies Flow)).toString("base64url");

/** What the sign-in page says for each failure, and with which status; the library's reason in brackets. */
function failurePage(oidc: OidcSignIn, failure: OidcFailure, reason: string, passwordToo: boolean): { status: number; problem: string } {
  const name = oidc.settings.displayName;
  const startAgain = "Start the sign-in again.";
  switch (failure) {
    case "unreachable":
      return { status: 503, problem: `${name} cannot be reached right now, so no one can sign in with it. Try again in a minute${passwordToo ? ", or sign in with your e-mail and password" : ""}.` };
    case "unknownProvider":
      return { status: 502, problem: `The identity provider did not answer as ${oidc.settings.issuer} (${reason}). Ask an administrator to check OIDC_ISSUER.` };
    case "flowMismatch":
      return { status: 400, problem: `That answer from ${name} does not belong to the sign-in this browser started (${reason}). ${startAgain}` };
    case "refused":
      return { status: 401, problem: `${name} did not sign you in (${reason}). ${startAgain}` };
    case "codeRejected":
      return { status: 400, problem: `${name} refused the sign-in code: it was used already or has expired (${reason}). ${startAgain}` };
    case "tokenRejected":
      return { status: 401, problem: `The answer from ${name} did not pass the console's checks, so you are not signed in (${reason}). ${startAgain}` };
  }
}

export function registerOidcSignIn(app: FastifyInstance, ctx: AppContext, oidc: OidcSignIn): void {
  const failed = (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    if (!(error instanceof OidcSignInError)) throw error;
    request.log.warn({ failure: error.failure, reason: error.reason }, "console sign-in through the identity provider failed");
    const { status, problem } = failurePage(oidc, error.failure, error.reason, ctx.config.consolePasswordSignIn);
    return sendSignInPage(ctx, request, reply, status, problem);
  };

  app.get(OIDC_START_PATH.slice("/console".length), async (request, reply) => {
    let started: Awaited<ReturnType<OidcSignIn["start"]>>;
    try {
      started = await oidc.start();
    } catch (error) {
      return failed(request, reply, error);
    }
    reply.setCookie(FLOW_COOKIE, encodeFlow(started.pending), flowCookieOptions);
    return reply.redirect(started.authorizationUrl, 303);
  });

  app.get(OIDC_CALLBACK_PATH.slice("/console".length), async (request, reply) => {
    const pending = readFlow(request);
    reply.clearCookie(FLOW_COOKIE, { path: OIDC_CALLBACK_PATH });
    if (!pending) {
      return sendSignInPage(ctx, request, reply, 400, `No sign-in with ${oidc.settings.displayName} was started in this browser in the last ten minutes. Start the sign-in again.`);
    }
    const url = request.raw.url ?? "";
    const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
    let verified: Awaited<ReturnType<OidcSignIn["finish"]>>;
    try {
      verified = await oidc.finish(query, pending);
    } catch (error) {
      return failed(request, reply, error);
    }
    const { issuer, subject, claims } = verified;
    const role = roleFromClaims(claims, oidc.settings);
    const email = emailFromClaims(claims);
    if (!role) return noAccess(reply, html`<p>${oidc.settings.displayName} signed you in as ${email ?? subject}, but gave you no role this console knows: none of the values of your <code>${oidc.settings.roleClaim}</code> claim is one it has been told about.</p><p>Ask whoever manages your account to give you the console's viewer, operator or admin role, then <a href="${OIDC_START_PATH}">sign in again</a>.</p>`);
    if (!email) return sendSignInPage(ctx, request, reply, 400, `${oidc.settings.displayName} did not tell the console your e-mail address (the email claim). Ask an administrator to add the email scope or claim.`);

    const outcome = await ctx.operatorAuth.signInWithIdentity({ issuer, subject, email, role });
    if (outcome.kind === "disabled") return noAccess(reply, html`<p>Your operator account (${outcome.operator.email}) is disabled. Ask an administrator to enable it.</p>`);
    if (outcome.kind === "emailTaken") {
      return sendSignInPage(ctx, request, reply, 409, `Another operator of this console already has the e-mail ${email} and signs in with a password; the console does not join the two. Ask an administrator to sort it out.`);
    }
    reply.setCookie(SESSION_COOKIE, outcome.sessionId, sessionCookieOptions);
    if (verified.idToken.length <= ID_TOKEN_COOKIE_MAX) reply.setCookie(ID_TOKEN_COOKIE, verified.idToken, idTokenCookieOptions);
    const body = html`<p>You are signed in as ${outcome.operator.email} (${outcome.operator.role}).</p><p><a href="/console">Continue to the console</a></p>`;
    return reply.type("text/html; charset=utf-8").send(movingOnPage("Signed in", body, "/console").markup);
  });
}

function noAccess(reply: FastifyReply, body: ReturnType<typeof html>): FastifyReply {
  return reply.code(403).type("text/html; charset=utf-8").send(barePage("No access to the console", body).markup);
}

/**
 * After the console's session has ended: for an operator of the provider, when the provider
 * offers a sign-out (end_session_endpoint), a page that moves on to it, with the ID token as the
 * hint and the sign-in page to come back to; otherwise undefined. A page, not a redirect: the
 * sign-out is a form, and the console's CSP lets forms go nowhere but the console.
 */
export async function endProviderSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, fromProvider: boolean): Promise<FastifyReply | undefined> {
  const idToken = request.cookies[ID_TOKEN_COOKIE];
  if (idToken !== undefined) reply.clearCookie(ID_TOKEN_COOKIE, { path: idTokenCookieOptions.path });
  if (!ctx.oidc || !fromProvider) return undefined;
  const url = await ctx.oidc.endSessionUrl(idToken, new URL("/console/login", ctx.oidc.settings.redirectUrl).href);
  if (!url) return undefined;
  const body = html`<p>You are signed out of the console. Signing you out at ${ctx.oidc.settings.displayName} too…</p><p><a href="${url}">Continue</a></p>`;
  return reply.type("text/html; charset=utf-8").send(movingOnPage("Signing out", body, url).markup);
}
