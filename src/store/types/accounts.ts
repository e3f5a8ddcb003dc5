/** The store's companies, their API keys and the server keys it keeps. */

export interface Company {
  companyId: number;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  keyId: string;
  companyId: number;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export interface ApiKeyWithHash extends ApiKeyRecord {
  secretHash: string;
}

/** The server keys a store keeps when none is configured. */
export type ServerKeyName = "jwt" | "data-encryption";

/** Companies and credentials (admin CLI and login). */
export interface AccountsStore {
  createCompany(input: { companyId?: number; name: string }): Promise<Company>;
  getCompany(companyId: number): Promise<Company | undefined>;
  /** The company under its new name; undefined when there is no such company. */
  renameCompany(companyId: number, name: string): Promise<Company | undefined>;
  createApiKey(input: { companyId: number; keyId: string; name: string | null; secretHash: string }): Promise<ApiKeyRecord>;
  findApiKey(companyId: number, keyId: string): Promise<ApiKeyWithHash | undefined>;
  listApiKeys(companyId: number): Promise<ApiKeyRecord[]>;
  /** Admin operation by key id alone; returns the key as revoked, or undefined when unknown. */
  revokeApiKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /**
   * A server key generated when none is configured (the HS256 token key, the data encryption
   * key), kept so that every process of one database agrees: `candidate` is stored when there
   * is none yet under `name`, and the stored one is returned. SQLite: a file beside the database
   * (mode 0600); PostgreSQL: a row of signing_secrets.
   */
  getOrCreateServerKey(name: ServerKeyName, candidate: string): Promise<string>;
}
