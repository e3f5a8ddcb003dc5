/** Operator actions behind the CLI: companies and API keys. */
import { newCredentials } from "../auth/credentials.ts";
import type { ApiKeyRecord, Company, Store } from "../store/store.ts";

export interface CreatedKey {
  keyId: string;
  companyId: number;
  apiKey: string;
  /** Shown once; only its hash is stored. */
  secret: string;
}

export const createCompany = (store: Store, input: { companyId?: number; name: string }): Promise<Company> => store.createCompany(input);

export const renameCompany = (store: Store, companyId: number, name: string): Promise<Company | undefined> => store.renameCompany(companyId, name);

/** A key asked for a company whose erase is under way (SPEC §22): it would outlive nothing. */
export class CompanyBeingErasedError extends Error {
  override name = "CompanyBeingErasedError";
}

/** Creates a key; creates the company first when it does not exist yet. Refused while the company is being erased. */
export async function createKey(store: Store, input: { companyId: number; name?: string }): Promise<CreatedKey> {
  if (await store.companyErasure(input.companyId)) {
    throw new CompanyBeingErasedError(`company ${input.companyId} is being erased; a key made after the erase ends starts an empty company`);
  }
  if (!(await store.getCompany(input.companyId))) {
    await store.createCompany({ companyId: input.companyId, name: `Company ${input.companyId}` });
  }
  const credentials = newCredentials(input.companyId);
  await store.createApiKey({ companyId: input.companyId, keyId: credentials.keyId, name: input.name ?? null, secretHash: credentials.secretHash });
  return { keyId: credentials.keyId, companyId: input.companyId, apiKey: credentials.apiKey, secret: credentials.secret };
}

export const listKeys = (store: Store, companyId: number): Promise<ApiKeyRecord[]> => store.listApiKeys(companyId);

export const revokeKey = (store: Store, keyId: string): Promise<ApiKeyRecord | undefined> => store.revokeApiKey(keyId);
