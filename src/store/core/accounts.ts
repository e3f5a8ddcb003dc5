/** Companies and API keys: what the admin CLI and login read and write. */
import { AlreadyExistsError } from "../errors.ts";
import type { DatabasePort } from "../port.ts";
import { toApiKey, toCompany, type ApiKeyRow, type CompanyRow } from "../rows.ts";
import type { Store } from "../store.ts";
import { ACCOUNTS_SQL } from "./sql-accounts.ts";

type AccountPart = Pick<
  Store,
  "createCompany" | "getCompany" | "renameCompany" | "createApiKey" | "findApiKey" | "listApiKeys" | "revokeApiKey"
>;

/** Tries for the next free company id; a concurrent create may take it first. */
const NEXT_ID_ATTEMPTS = 5;

export function accountsStore(db: DatabasePort): AccountPart {
  return {
    async createCompany({ companyId, name }) {
      const now = new Date().toISOString();
      for (let attempt = 1; ; attempt++) {
        const id = companyId ?? Number((await db.one<{ company_id: number | string }>(ACCOUNTS_SQL.nextCompanyId))!.company_id);
        try {
          return toCompany((await db.one<CompanyRow>(ACCOUNTS_SQL.insertCompany, [id, name, now]))!);
        } catch (error) {
          if (!(error instanceof AlreadyExistsError)) throw error;
          if (companyId !== undefined || attempt >= NEXT_ID_ATTEMPTS) throw new AlreadyExistsError(`company ${companyId ?? id} already exists`);
        }
      }
    },

    async getCompany(companyId) {
      const row = await db.one<CompanyRow>(ACCOUNTS_SQL.getCompany, [companyId]);
      return row && toCompany(row);
    },

    async renameCompany(companyId, name) {
      const row = await db.one<CompanyRow>(ACCOUNTS_SQL.renameCompany, [companyId, name]);
      return row && toCompany(row);
    },

    async createApiKey({ companyId, keyId, name, secretHash }) {
      return toApiKey((await db.one<ApiKeyRow>(ACCOUNTS_SQL.insertApiKey, [companyId, keyId, name, secretHash, new Date().toISOString()]))!);
    },

    async findApiKey(companyId, keyId) {
      const row = await db.one<ApiKeyRow & { secret_hash: string }>(ACCOUNTS_SQL.findApiKey, [companyId, keyId]);
      return row && { ...toApiKey(row), secretHash: row.secret_hash };
    },

    async listApiKeys(companyId) {
      return (await db.all<ApiKeyRow>(ACCOUNTS_SQL.listApiKeys, [companyId])).map(toApiKey);
    },

    async revokeApiKey(keyId) {
      const row = await db.one<ApiKeyRow>(ACCOUNTS_SQL.revokeApiKey, [keyId, new Date().toISOString()]);
      return row && toApiKey(row);
    },
  };
}
