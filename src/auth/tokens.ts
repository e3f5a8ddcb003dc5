/**
 * Token issue and verification with fast-jwt, HS256 only: the algorithm is pinned on both
 * sides, so `alg: none` and HS/RS confusion are refused by the verifier itself. Verified tokens
 * are remembered here by their text (bounded, and only answered between the token's `nbf` and
 * `exp`), so a token seen before costs no HMAC and no JSON parsing. fast-jwt's own cache keys
 * each token by its SHA-256: when a connection's requests carry different tokens (a client that
 * serves many companies), that hash cost a third of a Ping's CPU (docs/performance.md), and
 * fast-jwt warns at start-up against any other key.
 */
import { createHash, randomUUID } from "node:crypto";
import { createSigner, createVerifier, TokenError } from "fast-jwt";

export const API_KEY_ROLE = "ApiKey";

export interface TokenClaims {
  CompanyId: string;
  role: string;
  sub: string;
  jti: string;
  iat: number;
  nbf: number;
  exp: number;
  iss: string;
  aud: string;
}

export interface IssuedToken {
  bearerToken: string;
  /** `exp` as ISO 8601 UTC. */
  expires: string;
  claims: TokenClaims;
}

export interface TokenSettings {
  secret: string;
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

/** A token the guard refuses; `description` goes into WWW-Authenticate. */
export class TokenRejectedError extends Error {
  override name = "TokenRejectedError";
}

/** Longer tokens are refused before any parsing; ours are about 350 bytes. */
export const MAX_TOKEN_LENGTH = 4096;
/** Verified tokens remembered, the oldest forgotten first. */
const MAX_CACHED_TOKENS = 10_000;

/**
 * The `kid` header of our tokens: a digest of the key, so a future key rotation can tell keys
 * apart. It reveals nothing the HMAC itself does not (both let one test a guessed key).
 */
export const keyIdFor = (secret: string) => `hs1-${createHash("sha256").update(`work-item-api/kid\u0000${secret}`).digest("base64url").slice(0, 16)}`;

export class TokenService {
  private readonly sign: (payload: Record<string, unknown>) => string;
  private readonly verifyToken: (token: string) => { header: { kid?: unknown }; payload: Record<string, unknown> };
  private readonly kid: string;
  /** Verified claims by token text, in the order they were first verified. */
  private readonly verified = new Map<string, TokenClaims>();

  constructor(private readonly settings: TokenSettings) {
    const key = Buffer.from(settings.secret, "utf8");
    this.kid = keyIdFor(settings.secret);
    this.sign = createSigner({ key, algorithm: "HS256", kid: this.kid });
    this.verifyToken = createVerifier({
      key,
      complete: true,
      algorithms: ["HS256"],
      allowedIss: settings.issuer,
      allowedAud: settings.audience,
      // No "role": a valid token without it is a 403 (the guard), as ASP.NET's [Authorize(Roles)] does.
      requiredClaims: ["CompanyId", "sub", "exp", "iat", "nbf", "iss", "aud"],
    });
  }

  issue(companyId: number, keyId: string, now = Date.now()): IssuedToken {
    const iat = Math.floor(now / 1000);
    const claims: TokenClaims = {
      CompanyId: String(companyId),
      role: API_KEY_ROLE,
      sub: keyId,
      // randomUUID draws from a buffered entropy pool; randomBytes makes a call per token.
      jti: randomUUID(),
      iat,
      nbf: iat,
      exp: iat + this.settings.ttlSeconds,
      iss: this.settings.issuer,
      aud: this.settings.audience,
    };
    return { bearerToken: this.sign({ ...claims }), expires: new Date(claims.exp * 1000).toISOString(), claims };
  }

  /** Whether claims this service verified are still inside their nbf..exp window. */
  static isCurrent(claims: TokenClaims, now = Date.now()): boolean {
    // The same bounds as fast-jwt's own checks: valid from nbf up to and including exp.
    return now >= claims.nbf * 1000 && now <= claims.exp * 1000;
  }

  /** Returns the claims of a valid token; throws TokenRejectedError otherwise. */
  verify(token: string): TokenClaims {
    const known = this.verified.get(token);
    if (known !== undefined && TokenService.isCurrent(known)) return known;
    if (token.length > MAX_TOKEN_LENGTH) throw new TokenRejectedError("The token is too long.");
    let verified;
    try {
      verified = this.verifyToken(token);
    } catch (error) {
      throw new TokenRejectedError(describe(error));
    }
    // A kid names the key that signed the token; one we never issued is refused, even when the
    // signature happens to check out with ours. Tokens without a kid predate it and still pass.
    if (verified.header.kid !== undefined && verified.header.kid !== this.kid) {
      throw new TokenRejectedError("The token names a key this service does not have.");
    }
    // One frozen object per token: the guard finds the tenant it names by identity.
    const claims = Object.freeze(verified.payload) as unknown as TokenClaims;
    if (this.verified.size >= MAX_CACHED_TOKENS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, claims);
    return claims;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof TokenError)) return "The token is invalid.";
  switch (error.code) {
    case TokenError.codes.expired:
      return "The token has expired.";
    case TokenError.codes.inactive:
      return "The token is not valid yet.";
    case TokenError.codes.invalidAlgorithm:
      return "The token algorithm is not accepted.";
    case TokenError.codes.invalidSignature:
    case TokenError.codes.missingSignature:
      return "The token signature is invalid.";
    case TokenError.codes.invalidClaimValue:
      return "The token was not issued for this service.";
    case TokenError.codes.missingRequiredClaim:
      return "The token lacks a required claim.";
    default:
      return "The token is malformed.";
  }
}
