/**
 * GET/POST /console/login and POST /console/logout (SPEC §12.1): the password form, and the way
 * to the identity provider where one is configured (SPEC §19, oidc-sign-in.ts).
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { normaliseEmail } from "../operators/operator-auth.ts";
import type { LoginAttempt } from "../rate-limit/login-throttle.ts";
import { endProviderSession } from "./oidc-sign-in.ts";
import { csrfTokenFor, formField, SESSION_COOKIE, sessionCookieOptions } from "./security.ts";
import { sendSignInPage, signInPage } from "./sign-in-page.ts";

export function registerSignIn(app: FastifyInstance, ctx: AppContext): void {
  app.get("/login", async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId && (await ctx.operatorAuth.bySession(sessionId))) return reply.redirect("/console", 303);
    return sendSignInPage(ctx, request, reply, 200);
  });

  app.post("/login", async (request, reply) => {
    if (!ctx.config.consolePasswordSignIn) {
      return sendSignInPage(ctx, request, reply, 403, `Password sign-in is switched off here; sign in with ${ctx.config.oidc?.displayName ?? "the identity provider"}.`);
    }
    const email = normaliseEmail(formField(request, "email") ?? "");
    const password = formField(request, "password") ?? "";
    if (!email || !password) {
      return reply.code(400).type("text/html; charset=utf-8").send(signInPage(ctx, csrfTokenFor(request, reply), "Enter your e-mail and password.", email).markup);
    }
    const tooMany = (headers: Record<string, string>) =>
      reply.code(429).headers(headers).type("text/html; charset=utf-8").send(signInPage(ctx, csrfTokenFor(request, reply), "Too many failed sign-ins for this e-mail. Wait a minute, then try again.", email).markup);
    let attempt: LoginAttempt;
    try {
      attempt = await ctx.rateLimits.operatorSignIn.begin(email, request.ip);
    } catch (error) {
      if (error instanceof ApiError && error.code === "RATE_LIMITED") return tooMany(error.headers);
      throw error;
    }
    let signedIn: Awaited<ReturnType<typeof ctx.operatorAuth.signIn>>;
    try {
      signedIn = await ctx.operatorAuth.signIn(email, password);
    } catch (error) {
      await attempt.settle(error instanceof ApiError && error.code === "RATE_LIMITED" ? "refused" : "undecided");
      throw error;
    }
    if (!signedIn) {
      await attempt.settle("failed");
      if (attempt.refusal) return tooMany(attempt.refusal.headers);
      return reply.code(401).type("text/html; charset=utf-8").send(signInPage(ctx, csrfTokenFor(request, reply), "That e-mail and password do not match an enabled operator.", email).markup);
    }
    await attempt.settle("succeeded");
    reply.setCookie(SESSION_COOKIE, signedIn.sessionId, sessionCookieOptions);
    return reply.redirect("/console", 303);
  });

  app.post("/logout", async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    const operator = sessionId ? await ctx.operatorAuth.bySession(sessionId) : undefined;
    if (sessionId) await ctx.operatorAuth.signOut(sessionId);
    reply.clearCookie(SESSION_COOKIE, { path: sessionCookieOptions.path });
    return (await endProviderSession(ctx, request, reply, operator?.signInMethod === "oidc")) ?? reply.redirect("/console/login", 303);
  });
}

