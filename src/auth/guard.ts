/**
 * The bearer guard every protected route runs first (onRequest, before the body is read):
 * 401 with WWW-Authenticate for a missing or bad token or a revoked key, 403 for a valid
 * token without role ApiKey. On success `request.tenant` names the company all work is
 * scoped to.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.ts";
import type { KeyStatusCache } from "./key-status.ts";
import { API_KEY_ROLE, TokenRejectedError, type TokenService } from "./tokens.ts";

export interface Tenant {
  companyId: number;
  keyId: string;
}

declare module "fastify" {
  interface FastifyRequest {
    tenant: Tenant;
  }
}

const COMPANY_ID = /^[1-9][0-9]{0,14}$/;

const unauthorized = (description: string | undefined) =>
  new ApiError("UNAUTHORIZED", description ?? "Send Authorization: Bearer <token>; get a token from POST /api/Login/Authenticate.", {
    headers: {
      "www-authenticate": description === undefined ? 'Bearer realm="work-item-api"' : `Bearer realm="work-item-api", error="invalid_token", error_description="${description.replace(/"/g, "'")}"`,
    },
  });

export function createBearerGuard(tokens: TokenService, keyStatus: KeyStatusCache) {
  return async function bearerGuard(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === "") throw unauthorized(undefined);
    const match = /^Bearer +([^\s]+) *$/i.exec(header);
    if (!match) throw unauthorized("The Authorization header must be 'Bearer <token>'.");
    let claims;
    try {
      claims = tokens.verify(match[1]!);
    } catch (error) {
      if (error instanceof TokenRejectedError) throw unauthorized(error.message);
      throw error;
    }
    if (typeof claims.CompanyId !== "string" || !COMPANY_ID.test(claims.CompanyId) || typeof claims.sub !== "string") {
      throw unauthorized("The token does not name a company.");
    }
    if (claims.role !== API_KEY_ROLE) {
      throw new ApiError("FORBIDDEN", `This route requires a token with role ${API_KEY_ROLE}.`);
    }
    const companyId = Number(claims.CompanyId);
    const active = await keyStatus.isActive(companyId, claims.sub);
    if (!active) throw unauthorized("The API key of this token was revoked.");
    request.tenant = { companyId, keyId: claims.sub };
  };
}
