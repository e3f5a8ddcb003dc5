/**
 * The statements of companies and their API keys (the admin CLI's and login's), named and
 * written once for both backends (see ../port.ts). Two look across companies, admin only, and say so.
 */
import { statement } from "../port.ts";

const KEY_COLUMNS = "key_id, company_id, name, created_at, revoked_at";

export const ACCOUNTS_SQL = {
  insertCompany: statement("insert_company", "INSERT INTO companies (company_id, name, created_at) VALUES ($1, $2, $3) RETURNING company_id, name, created_at"),
  /** Across companies, admin only: the next free id for `companies create` without one. */
  nextCompanyId: statement("next_company_id", "SELECT COALESCE(MAX(company_id), 0) + 1 AS company_id FROM companies"),
  getCompany: statement("get_company", "SELECT company_id, name, created_at FROM companies WHERE company_id = $1"),
  renameCompany: statement("rename_company", "UPDATE companies SET name = $2 WHERE company_id = $1 RETURNING company_id, name, created_at"),
  insertApiKey: statement(
    "insert_api_key",
    `INSERT INTO api_keys (company_id, key_id, name, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${KEY_COLUMNS}`,
  ),
  findApiKey: statement("find_api_key", `SELECT ${KEY_COLUMNS}, secret_hash FROM api_keys WHERE company_id = $1 AND key_id = $2`),
  listApiKeys: statement("list_api_keys", `SELECT ${KEY_COLUMNS} FROM api_keys WHERE company_id = $1 ORDER BY created_at, key_id`),
  /** Across companies, admin only: `keys revoke --key-id` knows no company. */
  revokeApiKey: statement(
    "revoke_api_key",
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE key_id = $1 RETURNING ${KEY_COLUMNS}`,
  ),
} as const;
