/**
 * Server keys (SPEC §0, §11.3): the token signing key (`JWT_SECRET`) and the data encryption key
 * (`DATA_ENCRYPTION_KEY`) follow one rule. The configured value when it is set; otherwise one
 * generated on first start and kept by the store (SQLite: a file in the data folder, mode 0600;
 * PostgreSQL: a row every process reads), so that every process of one database agrees.
 */
import { randomBytes } from "node:crypto";
import type { ServerKeyName, Store } from "../store/store.ts";

export async function serverKey(store: Store, name: ServerKeyName, configured: string | undefined): Promise<string> {
  return configured ?? (await store.getOrCreateServerKey(name, randomBytes(48).toString("base64url")));
}
