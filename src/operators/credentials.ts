/**
 * Operator bearer tokens and console session ids: 256 random bits, handed out once and stored
 * only as their SHA-256 (a fast hash is enough for values that cannot be guessed; a slow one
 * would cost every request).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";

/** Operator tokens carry a prefix, so an integrator route can tell one apart from a JWT and answer 403. */
export const OPERATOR_TOKEN_PREFIX = "wio_";

/** The integrator routes' answer to an operator token (the bearer guard's ForeignToken): where it belongs. */
export const operatorTokenRefusal = (token: string): string | undefined =>
  token.startsWith(OPERATOR_TOKEN_PREFIX) ? "An operator token is accepted only on /api/Operator/*; integrator routes need a token from POST /api/Login/Authenticate." : undefined;

export const newOperatorToken = (): string => `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
export const newSessionId = (): string => randomBytes(32).toString("base64url");
export const hashCredential = (value: string): string => createHash("sha256").update(value).digest("hex");
export const newOperatorId = (): string => `op_${randomUUID().replace(/-/g, "")}`;
