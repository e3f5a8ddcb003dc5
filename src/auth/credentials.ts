/**
 * API credentials. The API key is a public identifier that names its company and key id
 * (`wia_<companyId>_<keyId>`), so login reads one row by primary key. The secret is 32 random
 * bytes; since it cannot be guessed, one SHA-256 is a sound hash at rest (a slow password hash
 * buys nothing against 256 bits of entropy and would cost every login milliseconds).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const API_KEY_PATTERN = /^wia_([1-9][0-9]{0,14})_([0-9a-f]{16})$/;

export interface NewCredentials {
  keyId: string;
  apiKey: string;
  secret: string;
  secretHash: string;
}

export function newCredentials(companyId: number): NewCredentials {
  const keyId = randomBytes(8).toString("hex");
  const secret = `wis_${randomBytes(32).toString("base64url")}`;
  return { keyId, apiKey: formatApiKey(companyId, keyId), secret, secretHash: hashSecret(secret) };
}

export const formatApiKey = (companyId: number, keyId: string) => `wia_${companyId}_${keyId}`;

export function parseApiKey(apiKey: string): { companyId: number; keyId: string } | undefined {
  const match = API_KEY_PATTERN.exec(apiKey);
  if (!match) return undefined;
  return { companyId: Number(match[1]), keyId: match[2]! };
}

export const hashSecret = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/** Constant-time comparison of a presented secret with the stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
