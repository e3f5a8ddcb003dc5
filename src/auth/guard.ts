/**
 * The bearer guard every protected route runs first (onRequest, before the body is read):
 * 401 with WWW-Authenticate for a missing or bad token or a revoked key, 403 for a valid
 * token without role ApiKey. On success `request.tenant` names the company all work is
 * scoped to.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from "fastify";
import { ApiError } from "../errors.ts";
import type { KeyStatusCache } from "./key-status.ts";
import { API_KEY_ROLE, TokenRejectedError, TokenService, type TokenClaims } from "./tokens.ts";

export interface Tenant {
  readonly companyId: number;
  readonly keyId: string;
}

declare module "fastify" {
  interface FastifyRequest {
    tenant: Tenant;
  }
}

const COMPANY_ID = /^[1-9][0-9]{0,14}$/;

/**
 * The last Authorization header a connection passed with, and what it named. A client sends the
 * same token on every request of a keep-alive connection, so the next request compares its
 * header with this one (same text: same token) instead of parsing it and looking it up again.
 * The token's time window and its key's status are still checked on every request.
 * Kept because `npm run bench` measured it: it saves ~18% of a Ping's CPU (docs/performance.md).
 */
const lastPass = Symbol("lastBearerPass");
interface Pass {
  readonly header: string;
  readonly claims: TokenClaims;
  readonly tenant: Tenant;
}
type RememberingSocket = { [lastPass]?: Pass };
export const BEARER = /^Bearer +([^\s]+) *$/i;

const HOW_TO_GET_A_TOKEN = "Send Authorization: Bearer <token>; get a token from POST /api/Login/Authenticate.";

/** A 401 with the Bearer challenge; `description` undefined means no token was sent at all. */
export const unauthorized = (description: string | undefined, missingDetail = HOW_TO_GET_A_TOKEN) =>
  new ApiError("UNAUTHORIZED", description ?? missingDetail, {
    headers: {
      "www-authenticate": description === undefined ? 'Bearer realm="work-item-api"' : `Bearer realm="work-item-api", error="invalid_token", error_description="${description.replace(/"/g, "'")}"`,
    },
  });

/**
 * Tells a token of another kind, one that is no JWT of this API, from a bad one: the reason it is
 * refused here (a 403 with that text), or undefined for a bad token (401). The app passes it in,
 * so the guard needs to know no other kind of token (the operators' is one).
 */
export type ForeignToken = (token: string) => string | undefined;

/**
 * The verified claims of a token are one cached, frozen object (TokenService), so the tenant it
 * names is worked out once per token and then found by identity; and a request whose key status
 * is cached takes no promise (the hook calls `done` at once).
 */
export function createBearerGuard(tokens: TokenService, keyStatus: KeyStatusCache, foreignToken: ForeignToken): onRequestHookHandler {
  const tenants = new WeakMap<TokenClaims, Tenant>();

  /** The tenant a token names, or the error to answer; only tenants are remembered. */
  function judge(claims: TokenClaims): { tenant: Tenant } | { error: ApiError } {
    const known = tenants.get(claims);
    if (known) return { tenant: known };
    if (typeof claims.CompanyId !== "string" || !COMPANY_ID.test(claims.CompanyId) || typeof claims.sub !== "string") {
      return { error: unauthorized("The token does not name a company.") };
    }
    if (claims.role !== API_KEY_ROLE) return { error: new ApiError("FORBIDDEN", `This route requires a token with role ${API_KEY_ROLE}.`) };
    const tenant = Object.freeze({ companyId: Number(claims.CompanyId), keyId: claims.sub });
    tenants.set(claims, tenant);
    return { tenant };
  }

  /** The tenant of a header this connection has not passed with, or the error to answer. */
  function authenticate(header: string, socket: RememberingSocket): Tenant | Error {
    const match = BEARER.exec(header);
    if (!match) return unauthorized("The Authorization header must be 'Bearer <token>'.");
    let claims: TokenClaims;
    try {
      claims = tokens.verify(match[1]!);
    } catch (error) {
      // Checked only once the token failed as a JWT, so a valid token costs nothing more.
      const refusal = foreignToken(match[1]!);
      if (refusal !== undefined) return new ApiError("FORBIDDEN", refusal);
      return error instanceof TokenRejectedError ? unauthorized(error.message) : (error as Error);
    }
    const verdict = judge(claims);
    if ("error" in verdict) return verdict.error;
    socket[lastPass] = { header, claims, tenant: verdict.tenant };
    return verdict.tenant;
  }

  return function bearerGuard(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const header = request.headers.authorization;
    if (header === undefined || header === "") return done(unauthorized(undefined));
    const socket = (request.raw.socket ?? {}) as RememberingSocket;
    const pass = socket[lastPass];
    let tenant: Tenant;
    if (pass !== undefined && pass.header === header && TokenService.isCurrent(pass.claims)) {
      tenant = pass.tenant;
    } else {
      const outcome = authenticate(header, socket);
      if (outcome instanceof Error) return done(outcome);
      tenant = outcome;
    }
    const active = keyStatus.isActive(tenant.companyId, tenant.keyId);
    if (active === true) {
      request.tenant = tenant;
      return done();
    }
    if (active === false) return done(unauthorized("The API key of this token was revoked."));
    active.then(
      (isActive) => {
        if (!isActive) return done(unauthorized("The API key of this token was revoked."));
        request.tenant = tenant;
        done();
      },
      (error: unknown) => done(error as Error),
    );
  };
}
