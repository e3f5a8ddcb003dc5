/** GET/POST /console/login and POST /console/logout (SPEC §12.1). */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { normaliseEmail } from "../operators/operator-auth.ts";
import type { LoginAttempt } from "../rate-limit/login-throttle.ts";
import { html } from "./html.ts";
import { barePage, csrfField } from "./layout.ts";
import { csrfTokenFor, formField, SESSION_COOKIE, sessionCookieOptions } from "./security.ts";

function signInPage(csrfToken: string, problem?: string, email = "") {
  return barePage(
    "Sign in",
    html`${problem ? html`<p class="notice notice-error" role="alert">${problem}</p>` : ""}
<form method="post" action="/console/login" class="stacked sign-in">
${csrfField(csrfToken)}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function registerSignIn(app: FastifyInstance, ctx: AppContext): void {
  app.get("/login", async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId && (await ctx.operatorAuth.bySession(sessionId))) return reply.redirect("/console", 303);
    return reply.type("text/html; charset=utf-8").send(signInPage(csrfTokenFor(request, reply)).markup);
  });

  app.post("/login", async (request, reply) => {
    const email = normaliseEmail(formField(request, "email") ?? "");
    const password = formField(request, "password") ?? "";
    if (!email || !password) {
      return reply.code(400).type("text/html; charset=utf-8").send(signInPage(csrfTokenFor(request, reply), "Enter your e-mail and password.", email).markup);
    }
    const tooMany = (headers: Record<string, string>) =>
      reply.code(429).headers(headers).type("text/html; charset=utf-8").send(signInPage(csrfTokenFor(request, reply), "Too many failed sign-ins for this e-mail. Wait a minute, then try again.", email).markup);
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
      return reply.code(401).type("text/html; charset=utf-8").send(signInPage(csrfTokenFor(request, reply), "That e-mail and password do not match an enabled operator.", email).markup);
    }
    await attempt.settle("succeeded");
    reply.setCookie(SESSION_COOKIE, signedIn.sessionId, sessionCookieOptions);
    return reply.redirect("/console", 303);
  });

  app.post("/logout", async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId) await ctx.operatorAuth.signOut(sessionId);
    reply.clearCookie(SESSION_COOKIE, { path: sessionCookieOptions.path });
    return reply.redirect("/console/login", 303);
  });
}

