/**
 * The operators' console (SPEC §12.3): server-rendered pages under /console, protected by a
 * session cookie, a CSRF token and a same-origin check; errors are pages, not problem+json.
 */
import type { FastifyError, FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError, toApiError } from "../errors.ts";
import { answerNoStore } from "../http/no-store.ts";
import { registerAssets, registerFavicon } from "./assets.ts";
import { registerAuditPage } from "./audit-page.ts";
import { registerDeliveriesPage } from "./deliveries-page.ts";
import { registerFindPage } from "./find-page.ts";
import { html, type Html } from "./html.ts";
import { barePage } from "./layout.ts";
import { registerOidcSignIn } from "./oidc-sign-in.ts";
import { registerOverviewPage } from "./overview-page.ts";
import { installConsoleSecurity, requireSession } from "./security.ts";
import { registerSignIn } from "./sign-in.ts";
import { registerWorkItemPage } from "./work-item-page.ts";
import { registerWorkItemsPage } from "./work-items-page.ts";

/** Fastify's and the plugins' own 4xx (the CSRF plugin's 403s among them) keep their status. */
function consoleError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const status = (error as Partial<FastifyError>).statusCode;
  if (status === 403) return new ApiError("FORBIDDEN", "This form has expired or did not come from the console. Go back, reload the page and try again.");
  return toApiError(error);
}

/** What went wrong, for a person: the detail, or each field with its problems (a query or form value the store cannot hold, say). */
function problemText(problem: ApiError): Html {
  if (!problem.errors) return html`<p>${problem.detail}</p>`;
  const fields = Object.entries(problem.errors).map(([field, messages]) => html`<li><code>${field}</code> ${messages.join("; ")}</li>`);
  return html`<p>This cannot be used as it is sent:</p><ul>${fields}</ul>`;
}

export async function registerConsole(app: FastifyInstance, ctx: AppContext): Promise<void> {
  registerFavicon(app);
  await app.register(
    async (console) => {
      // Pages for people, not API operations: kept out of the OpenAPI document.
      console.addHook("onRoute", (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      answerNoStore(console);
      await installConsoleSecurity(console, ctx);

      console.setErrorHandler(async (error, request, reply) => {
        const problem = consoleError(error);
        if (problem.status >= 500) request.log.error({ err: error }, "console request failed");
        for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
        const body = html`${problemText(problem)}<p><a href="/console">Back to the overview</a></p>`;
        return reply.code(problem.status).type("text/html; charset=utf-8").send(barePage(problem.title, body).markup);
      });
      console.setNotFoundHandler(async (_request, reply) => {
        const body = html`<p>There is no console page at this address.</p><p><a href="/console">Back to the overview</a></p>`;
        return reply.code(404).type("text/html; charset=utf-8").send(barePage("Not found", body).markup);
      });
      // Every state-changing request carries the token of a form this console rendered.
      console.addHook("preHandler", (request, reply, done) => {
        if (request.method === "GET" || request.method === "HEAD") return done();
        console.csrfProtection(request, reply, done);
      });

      registerAssets(console);
      registerSignIn(console, ctx);
      if (ctx.oidc) registerOidcSignIn(console, ctx, ctx.oidc);
      await console.register(async (pages) => {
        pages.addHook("preHandler", requireSession(ctx));
        registerOverviewPage(pages, ctx);
        registerWorkItemsPage(pages, ctx);
        registerWorkItemPage(pages, ctx);
        registerDeliveriesPage(pages, ctx);
        registerAuditPage(pages, ctx);
        registerFindPage(pages, ctx);
      });
    },
    { prefix: "/console" },
  );
}
