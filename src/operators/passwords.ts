/**
 * Operator passwords (SPEC §12.1): random, shown once, stored only as a salted scrypt hash.
 * scrypt is memory-hard and in node:crypto, so no dependency is needed for it. The cost is
 * kept in the stored text, so it can be raised later without breaking old hashes.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { availableParallelism } from "node:os";
import { ApiError } from "../errors.ts";

/** 2^15 × 8 × 128 B = 32 MiB per hash, ~50–100 ms here: expensive to guess, cheap enough to sign in. */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

/**
 * scrypt runs on libuv's thread pool (4 threads by default), which DNS lookups share, and each
 * hash is ~50–100 ms of a CPU: a flood of sign-ins once held every thread, and intake's
 * webhook-host lookups waited seconds behind them. At most half the pool and half the CPUs hash
 * at once (2 on 4 or more CPUs, 1 on 2); the others are refused at once, to be retried.
 */
export const PASSWORD_HASHES_AT_ONCE = Math.max(1, Math.min(2, Math.floor(availableParallelism() / 2)));
let hashing = 0;

/** Throws the 429 when no hash may start now; a sign-in asks before it reads the store, so a refused one costs nothing. */
export function refuseWhileHashingIsFull(): void {
  if (hashing >= PASSWORD_HASHES_AT_ONCE) {
    throw new ApiError("RATE_LIMITED", "Too many sign-ins are being checked at once; try again in a second.", { headers: { "retry-after": "1" } });
  }
}

async function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  refuseWhileHashingIsFull();
  hashing += 1;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const maxmem = 256 * options.N! * options.r! + 1024 * 1024;
      scrypt(password.normalize("NFC"), salt, KEY_LENGTH, { ...options, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
    });
  } finally {
    hashing -= 1;
  }
}

/** 24 random characters from a 64-letter alphabet: 144 bits. */
export const newPassword = (): string => randomBytes(18).toString("base64url");

/** `scrypt$N$r$p$<salt>$<hash>`, base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ["scrypt", COST.N, COST.r, COST.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const key = await derive(password, Buffer.from(salt, "base64url"), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of a password no one has, so an unknown e-mail costs as much time as a wrong password. */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> =>
  (decoy ??= hashPassword(newPassword()).catch((error: unknown) => {
    // Refused while others were hashing: made on a later sign-in instead.
    decoy = undefined;
    throw error;
  }));
