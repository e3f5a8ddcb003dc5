/**
 * The statements of the operators' accounts (SPEC §12.1): operators, their API tokens and their
 * console sessions. Written once for both backends (see ../port.ts); not tenant data.
 */
import { statement } from "../port.ts";

const OPERATOR_COLUMNS = "operator_id, email, role, created_at, disabled_at, sign_in_method";
/** The same, of operators joined as `o`. */
const OPERATOR_COLUMNS_OF_O = OPERATOR_COLUMNS.split(", ").map((column) => `o.${column}`).join(", ");

export const OPERATORS_SQL = {
  insertOperator: statement(
    "insert_operator",
    `INSERT INTO operators (operator_id, email, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (email) DO NOTHING RETURNING ${OPERATOR_COLUMNS}`,
  ),
  listOperators: statement("list_operators", `SELECT ${OPERATOR_COLUMNS} FROM operators ORDER BY created_at, email`),
  findOperatorByEmail: statement("find_operator_by_email", `SELECT ${OPERATOR_COLUMNS}, password_hash FROM operators WHERE email = $1`),
  disableOperator: statement(
    "disable_operator",
    `UPDATE operators SET disabled_at = COALESCE(disabled_at, $2) WHERE email = $1 RETURNING ${OPERATOR_COLUMNS}`,
  ),
  setOperatorPassword: statement("set_operator_password", `UPDATE operators SET password_hash = $2 WHERE email = $1 RETURNING ${OPERATOR_COLUMNS}`),
  deleteOperatorTokens: statement("delete_operator_tokens", "DELETE FROM operator_tokens WHERE operator_id = $1"),
  deleteOperatorSessions: statement("delete_operator_sessions", "DELETE FROM operator_sessions WHERE operator_id = $1"),
  insertOperatorToken: statement("insert_operator_token", "INSERT INTO operator_tokens (token_hash, operator_id, created_at) VALUES ($1, $2, $3)"),
  findOperatorByToken: statement(
    "find_operator_by_token",
    `SELECT ${OPERATOR_COLUMNS_OF_O} FROM operator_tokens t JOIN operators o ON o.operator_id = t.operator_id
      WHERE t.token_hash = $1 AND o.disabled_at IS NULL`,
  ),
  insertOperatorSession: statement(
    "insert_operator_session",
    "INSERT INTO operator_sessions (session_hash, operator_id, created_at, last_seen_at) VALUES ($1, $2, $3, $3)",
  ),
  findOperatorBySession: statement(
    "find_operator_by_session",
    `SELECT ${OPERATOR_COLUMNS_OF_O}, s.last_seen_at FROM operator_sessions s
       JOIN operators o ON o.operator_id = s.operator_id
      WHERE s.session_hash = $1 AND s.last_seen_at >= $2 AND o.disabled_at IS NULL`,
  ),
  touchOperatorSession: statement("touch_operator_session", "UPDATE operator_sessions SET last_seen_at = $2 WHERE session_hash = $1"),
  deleteOperatorSession: statement("delete_operator_session", "DELETE FROM operator_sessions WHERE session_hash = $1"),
  insertSignInAudit: statement(
    "insert_sign_in_audit",
    `INSERT INTO audit_log (at, operator_id, operator_email, action, reason, sign_in_method, sign_in_issuer, sign_in_subject)
     VALUES ($1, $2, $3, 'operator.signin', '', $4, $5, $6)`,
  ),
  findOperatorByIdentity: statement(
    "find_operator_by_identity",
    `SELECT ${OPERATOR_COLUMNS_OF_O} FROM operator_identities i JOIN operators o ON o.operator_id = i.operator_id WHERE i.issuer = $1 AND i.subject = $2`,
  ),
  /** An operator of the identity provider has no password: the hash is one no password matches. */
  insertProviderOperator: statement(
    "insert_provider_operator",
    `INSERT INTO operators (operator_id, email, role, password_hash, created_at, sign_in_method) VALUES ($1, $2, $3, '!oidc', $4, 'oidc')
     ON CONFLICT (email) DO NOTHING RETURNING ${OPERATOR_COLUMNS}`,
  ),
  insertIdentity: statement(
    "insert_operator_identity",
    "INSERT INTO operator_identities (issuer, subject, operator_id, created_at) VALUES ($1, $2, $3, $4)",
  ),
  setOperatorRole: statement("set_operator_role", `UPDATE operators SET role = $2 WHERE operator_id = $1 RETURNING ${OPERATOR_COLUMNS}`),
} as const;
