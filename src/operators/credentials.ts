/**
 * Operator bearer tokens and console session ids: 256 random bits, handed out once and stored
 * only as their SHA-256 (a fast hash is enough for values that cannot be guessed; a slow one
 * would cost every request).
 */
import { createHash, randomBytes } from "node:crypto";

/** Operator tokens carry a prefix, so an integrator route can tell one apart from a JWT and answer 403. */
export const OPERATOR_TOKEN_PREFIX = "wio_";

export const newOperatorToken = (): string => `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
export const newSessionId = (): string => randomBytes(32).toString("base64url");
export const hashCredential = (value: string): string => createHash("sha256").update(value).digest("hex");
