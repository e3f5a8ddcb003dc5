/** The sign-in page (SPEC §12.1, §19): the identity provider's button, the password form, or both. */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../app-context.ts";
import { html } from "./html.ts";
import { barePage, csrfField } from "./layout.ts";
import { csrfTokenFor } from "./security.ts";

export const OIDC_START_PATH = "/console/oidc/start";

export function signInPage(ctx: AppContext, csrfToken: string, problem?: string, email = "") {
  const password = ctx.config.consolePasswordSignIn;
  const provider = ctx.config.oidc?.displayName;
  return barePage(
    "Sign in",
    html`${problem ? html`<p class="notice notice-error" role="alert">${problem}</p>` : ""}
${provider ? html`<p class="provider-sign-in"><a class="button-link" href="${OIDC_START_PATH}">Sign in with ${provider}</a></p>` : ""}
${provider && password ? html`<p>Or sign in with your e-mail and password:</p>` : ""}
${password
  ? html`<form method="post" action="/console/login" class="stacked sign-in">
${csrfField(csrfToken)}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`
  : ""}`,
  );
}

/** The sign-in page with a message, for every way a sign-in can end without a session. */
export function sendSignInPage(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, status: number, problem?: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(signInPage(ctx, csrfTokenFor(request, reply), problem).markup);
}
