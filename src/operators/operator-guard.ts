/**
 * The guard of the operator API (SPEC §12.1), run onRequest before the body is read: an operator
 * bearer token (`wio_…`) sets `request.operator`; no token or an unknown, revoked or disabled
 * operator's token is a 401 with the Bearer challenge; an integrator's valid JWT is a 403, so a
 * script that sent the wrong kind of token learns that rather than "try again".
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { BEARER, unauthorized } from "../auth/guard.ts";
import type { TokenService } from "../auth/tokens.ts";
import { ApiError } from "../errors.ts";
import type { Operator } from "../store/store.ts";
import { OPERATOR_TOKEN_PREFIX } from "./credentials.ts";
import type { OperatorAuth } from "./operator-auth.ts";
import { actionBy, mayAct, mayAdminister } from "./roles.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The operator calling the operator API; set by its guard. */
    operator: Operator;
  }
}

/** What newOperatorToken makes (32 random bytes, base64url): anything else is refused without a store lookup. */
const OPERATOR_TOKEN_SHAPE = new RegExp(`^${OPERATOR_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`);

const HOW_TO_GET_AN_OPERATOR_TOKEN = "Send Authorization: Bearer <operator token>; get one with `npm run -s cli -- operators token --email E`.";

/** What the guard looks tokens up with: the operators' in the store, and the integrators' JWTs. */
export interface OperatorGuardDeps {
  operatorAuth: Pick<OperatorAuth, "byToken">;
  tokens: Pick<TokenService, "verify">;
}

export function createOperatorGuard(deps: OperatorGuardDeps): onRequestHookHandler {
  return async function operatorGuard(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === "") throw unauthorized(undefined, HOW_TO_GET_AN_OPERATOR_TOKEN);
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) throw unauthorized("The Authorization header must be 'Bearer <token>'.");
    if (token.startsWith(OPERATOR_TOKEN_PREFIX)) {
      const operator = OPERATOR_TOKEN_SHAPE.test(token) ? await deps.operatorAuth.byToken(token) : undefined;
      if (!operator) throw unauthorized("The operator token is unknown, or its operator is disabled.");
      request.operator = operator;
      return;
    }
    if (isIntegratorToken(deps, token)) throw new ApiError("FORBIDDEN", "An integrator's token is not accepted on the operator API; use an operator token.");
    throw unauthorized("The token is not an operator token.");
  };
}

function isIntegratorToken(deps: Pick<OperatorGuardDeps, "tokens">, token: string): boolean {
  try {
    deps.tokens.verify(token);
    return true;
  } catch {
    return false;
  }
}

/** Route-level onRequest of every state-changing operator route: viewers read only (SPEC §12.1). */
export async function requireActingRole(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!mayAct(request.operator.role)) {
    throw new ApiError("FORBIDDEN", `Operator role ${request.operator.role} may only read; retrying, cancelling, pausing, resuming and redelivering need role operator or admin.`);
  }
}

export async function requireAdmin(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!mayAdminister(request.operator.role)) {
    throw new ApiError("FORBIDDEN", `Operator role ${request.operator.role} may not do this; erasing a company and taking its export need role admin.`);
  }
}

/** Who acts, why and when, as the store records it in the audit log and the item's timeline. */
export const operatorAction = (request: FastifyRequest, reason: string) => actionBy(request.operator, reason);
