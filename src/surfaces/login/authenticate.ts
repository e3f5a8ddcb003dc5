/**
 * POST /api/Login/Authenticate: exchange an API key and secret for a bearer token (SPEC §2).
 * Unknown key, wrong secret and revoked key get the same 401, so the answer is no oracle.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { parseApiKey, secretMatches } from "../../auth/credentials.ts";
import { ApiError } from "../../errors.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { publicResponses } from "../../http/problem-schema.ts";

export const Credentials = Type.Object(
  {
    apiKey: Type.String({ minLength: 1, maxLength: 200, description: "the long-lived API key", examples: ["wia_42_3f9a0c1b2d4e5f60"] }),
    secret: Type.String({ minLength: 1, maxLength: 200, description: "the long-lived API secret", examples: ["wis_…"] }),
  },
  {
    additionalProperties: false,
    title: "Credentials",
    examples: [{ apiKey: "wia_42_3f9a0c1b2d4e5f60", secret: "wis_Jx3…" }],
  },
);
export type Credentials = Static<typeof Credentials>;

export const TokenResponse = Type.Object(
  {
    bearerToken: Type.String({ description: "the JWT; send it as Authorization: Bearer <token>", examples: ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…"] }),
    expires: Type.String({ format: "date-time", description: "when the token stops being valid (ISO 8601 UTC)", examples: ["2026-11-21T14:23:12.000Z"] }),
  },
  {
    title: "TokenResponse",
    description: "a bearer token and when it expires",
    examples: [{ bearerToken: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…", expires: "2026-11-21T14:23:12.000Z" }],
  },
);
export type TokenResponse = Static<typeof TokenResponse>;

const canonicalize = createCanonicalizer(Credentials);
const invalidCredentials = () => new ApiError("UNAUTHORIZED", "The API key or secret is not valid.");

export async function registerLogin(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Body: Credentials }>("/api/Login/Authenticate", {
    schema: {
      summary: "Exchange an API key and secret for a bearer token",
      operationId: "Authenticate",
      tags: ["Login"],
      security: [],
      body: Credentials,
      response: { 200: TokenResponse, ...publicResponses(400, 401, 413, 415, 429, 503) },
    },
    preValidation: async (request) => {
      request.body = canonicalize(request.body) as Credentials;
    },
    handler: async (request): Promise<TokenResponse> => {
      const { apiKey, secret } = request.body;
      // Throws 429 before the secret is looked at when this address failed on this key too often;
      // an address over its own limit gets its 429 only for wrong credentials (SPEC §11.5).
      const attempt = await ctx.rateLimits.login.begin(apiKey, request.ip);
      let outcome: "failed" | "succeeded" | "undecided" = "undecided";
      try {
        const parsed = parseApiKey(apiKey);
        // The row comes from login's key cache (at most 2 s old, the same bound as for tokens: a
        // revoked key can log in for at most that long, see src/auth/key-status.ts).
        let key = parsed && ctx.loginKeys.lookup(parsed.companyId, parsed.keyId);
        if (key instanceof Promise) key = await key;
        if (!key || key.revokedAt !== null || !secretMatches(secret, key.secretHash)) {
          outcome = "failed";
          throw attempt.refusal ?? invalidCredentials();
        }
        const { bearerToken, expires } = ctx.tokens.issue(key.companyId, key.keyId);
        ctx.metrics.tokensIssued.inc();
        outcome = "succeeded";
        return { bearerToken, expires };
      } finally {
        await attempt.settle(outcome);
      }
    },
  });
}
