/**
 * buildApp(config, deps) -> a ready Fastify instance; buildProbeApp(config, deps) -> one with
 * only /healthz, /readyz and /metrics, what a ROLE=worker process serves so that it is probed
 * and scraped like the others. Neither listens: tests use inject, and server.ts decides where.
 */
import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type onRequestHookHandler } from "fastify";
import type { AppContext } from "./app-context.ts";
import { createBearerGuard } from "./auth/guard.ts";
import { KeyStatusCache } from "./auth/key-status.ts";
import { TokenService } from "./auth/tokens.ts";
import type { Config } from "./config.ts";
import { installErrorHandling } from "./errors.ts";
import { refuseUnstorableQuery } from "./http/storable-text.ts";
import { checkQueryShape } from "./http/query-shape.ts";
import { installJsonParser } from "./http/json-body.ts";
import { refuseWhileClosing, serverOptions } from "./http/server-options.ts";
import { bindRequestLog, lazyChildLoggerFactory } from "./http/request-logger.ts";
import { createValidatorCompiler } from "./http/validation.ts";
import { documentDocsRoute, OpenApiDocumentSchema } from "./http/docs.ts";
import { installRequestObservation } from "./http/observability.ts";
import { finishOpenApiDocument } from "./http/openapi-contract.ts";
import { serverKey } from "./lib/server-keys.ts";
import { registerConsole } from "./console/index.ts";
import { createLogger } from "./logger.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { operatorTokenRefusal } from "./operators/credentials.ts";
import { OidcSignIn, type CustomFetch } from "./operators/oidc.ts";
import { OperatorAuth } from "./operators/operator-auth.ts";
import { createRateLimits } from "./rate-limit/index.ts";
import type { Store } from "./store/store.ts";
import { registerAuthorityRvdm } from "./surfaces/authority-rvdm/index.ts";
import { registerEvents } from "./surfaces/events/index.ts";
import { registerLogin } from "./surfaces/login/authenticate.ts";
import { OPERATOR_SECURITY_SCHEME, registerOperator } from "./surfaces/operator/index.ts";
import { registerOps, type OpsContext } from "./surfaces/ops/index.ts";
import { registerVlmMad } from "./surfaces/vlm-mad/ping.ts";
import { registerWebhooks } from "./surfaces/webhooks/index.ts";
import { webhooksSection } from "./webhooks/event-schema.ts";
import type { Lookup } from "./webhooks/address-guard.ts";
import { installRequestSpans } from "./telemetry/request-span.ts";

export interface AppDeps {
  store: Store;
  logger?: FastifyBaseLogger;
  /** Shared with the bot and dispatcher of the same process; a fresh registry when omitted. */
  metrics?: Metrics;
  /** How intake resolves webhook hosts; the system resolver when omitted. */
  webhookLookup?: Lookup;
  /** How the console reaches the identity provider; the platform's fetch when omitted. */
  identityProviderFetch?: CustomFetch;
}

export async function createAppContext(
  config: Config,
  store: Store,
  logger: FastifyBaseLogger,
  metrics: Metrics = createMetrics(),
): Promise<AppContext> {
  const secret = await serverKey(store, "jwt", config.jwtSecret);
  // Both server keys are made when a process starts, so that no request or delivery makes one:
  // on Citus their table is a reference table, whose writes need every node (SPEC §23).
  await serverKey(store, "data-encryption", config.dataEncryptionKey);
  const tokens = new TokenService({ secret, issuer: config.jwtIssuer, audience: config.jwtAudience, ttlSeconds: config.tokenTtlSeconds });
  const keyStatus = new KeyStatusCache(store);
  const loginKeys = new KeyStatusCache(store);
  const rateLimits = createRateLimits(config, logger, (surface, outcome) => metrics.signInAttempts.inc({ surface, outcome }));
  await rateLimits.ready();
  const guard = createBearerGuard(tokens, keyStatus, operatorTokenRefusal);
  const tenantLimit = rateLimits.tenant;
  // The company's budget is charged only once the token names it, so strangers cannot spend it.
  const bearerGuard: onRequestHookHandler = tenantLimit
    ? function guardThenLimit(request, reply, done) {
        guard.call(this, request, reply, (error?: Error) => {
          if (error) return done(error);
          tenantLimit.charge(request.tenant.companyId, done);
        });
      }
    : guard;
  return { config, store, tokens, keyStatus, loginKeys, metrics, rateLimits, bearerGuard, operatorAuth: new OperatorAuth(store) };
}

/** The routes a worker serves: its probes and its metrics, behind the same server defences. */
export async function buildProbeApp(config: Config, deps: Omit<OpsContext, "config"> & { logger: FastifyBaseLogger }): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverOptions(config),
    loggerInstance: deps.logger,
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
  });
  refuseWhileClosing(app);
  installErrorHandling(app, (url) => (["/healthz", "/readyz", "/metrics"].includes((url.split("?")[0] ?? url).toLowerCase()) ? ["GET", "HEAD"] : []));
  await registerOps(app, { config, store: deps.store, metrics: deps.metrics });
  return app;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const logger = deps.logger ?? createLogger(config);
  const ctx = await createAppContext(config, deps.store, logger, deps.metrics);
  if (deps.webhookLookup) ctx.webhookLookup = deps.webhookLookup;
  if (config.oidc) ctx.oidc = new OidcSignIn(config.oidc, deps.identityProviderFetch);
  const app = Fastify({
    ...serverOptions(config),
    loggerInstance: logger,
    // installRequestObservation writes the one completion line per request instead.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    requestIdHeader: false,
    // An upstream proxy's request id is kept when it looks like one, so logs join up.
    genReqId: (request) => {
      const incoming = request.headers["x-request-id"];
      return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    childLoggerFactory: lazyChildLoggerFactory,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // A request's log lines name its span.
  if (config.tracing) await installRequestSpans(app, (request, logBindings) => bindRequestLog(request.log, logBindings));
  app.addHook("onClose", () => ctx.rateLimits.close());
  refuseWhileClosing(app);
  app.setValidatorCompiler(createValidatorCompiler());
  installRequestObservation(app, ctx.metrics);
  app.removeContentTypeParser(["text/plain"]);
  installJsonParser(app);
  refuseUnstorableQuery(app);
  checkQueryShape(app);

  const routePatterns: Array<{ method: string; pattern: RegExp }> = [];
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z]+/g, "[^/]+")}/?$`, "i");
    for (const method of methods) routePatterns.push({ method, pattern });
  });
  installErrorHandling(app, (url) => {
    const path = url.split("?")[0] ?? url;
    return [...new Set(routePatterns.filter((route) => route.pattern.test(path)).map((route) => route.method))];
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Work-Item API",
        version: "1.0.0",
        description:
          "Hand Authority RVDM registration work to the bot and get the results back. Exchange your API key and secret for a 20-minute token at POST /api/Login/Authenticate, then send it as `Authorization: Bearer <token>`.",
      },
      // Relative: the document names the server that serves it, wherever that is.
      servers: [{ url: "/", description: "the server that serves this document" }],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
          [OPERATOR_SECURITY_SCHEME]: { type: "http", scheme: "bearer", bearerFormat: "wio_…", description: "an operator token: npm run -s cli -- operators token --email E" },
        },
      },
    },
    transform: documentDocsRoute,
    transformObject: (document) => ("openapiObject" in document ? finishOpenApiDocument(document.openapiObject, webhooksSection()) : document.swaggerObject),
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { validatorUrl: null, docExpansion: "list", deepLinking: true } });
  app.get("/openapi.json", { schema: OpenApiDocumentSchema }, async () => app.swagger() as unknown as Record<string, unknown>);

  await registerOps(app, ctx);
  await registerLogin(app, ctx);
  await registerAuthorityRvdm(app, ctx);
  await registerVlmMad(app, ctx);
  await registerEvents(app, ctx);
  await registerWebhooks(app, ctx);
  await registerOperator(app, ctx);
  await registerConsole(app, ctx);
  return app;
}
