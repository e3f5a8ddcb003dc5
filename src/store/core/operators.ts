/**
 * Operators and their credentials (SPEC §12.1): accounts, bearer tokens and console sessions,
 * stored only as hashes (src/operators/ makes and checks them). Disabling an operator ends its
 * sessions and tokens in the same transaction.
 */
import type { DatabasePort } from "../port.ts";
import { iso } from "../rows.ts";
import type { Operator, OperatorRole, Store } from "../store.ts";
import { OPERATOR_SQL } from "./sql-operators.ts";

type OperatorPart = Pick<
  Store,
  | "createOperator"
  | "listOperators"
  | "findOperatorByEmail"
  | "disableOperator"
  | "setOperatorPassword"
  | "addOperatorToken"
  | "findOperatorByToken"
  | "addOperatorSession"
  | "findOperatorBySession"
  | "touchOperatorSession"
  | "deleteOperatorSession"
>;

export interface OperatorRow {
  operator_id: string;
  email: string;
  role: OperatorRole;
  created_at: string | Date;
  disabled_at: string | Date | null;
}

export const toOperator = (row: OperatorRow): Operator => ({
  operatorId: row.operator_id,
  email: row.email,
  role: row.role,
  disabled: row.disabled_at !== null,
  createdAt: iso(row.created_at),
});

export function operatorsStore(db: DatabasePort): OperatorPart {
  return {
    async createOperator({ operatorId, email, role, passwordHash, now }) {
      const row = await db.one<OperatorRow>(OPERATOR_SQL.insertOperator, [operatorId, email, role, passwordHash, now]);
      return row && toOperator(row);
    },

    async listOperators() {
      return (await db.all<OperatorRow>(OPERATOR_SQL.listOperators)).map(toOperator);
    },

    async findOperatorByEmail(email) {
      const row = await db.one<OperatorRow & { password_hash: string }>(OPERATOR_SQL.findOperatorByEmail, [email]);
      return row && { ...toOperator(row), passwordHash: row.password_hash };
    },

    disableOperator(email, now) {
      return db.transaction(async (tx) => {
        const row = await tx.one<OperatorRow>(OPERATOR_SQL.disableOperator, [email, now]);
        if (!row) return undefined;
        await tx.run(OPERATOR_SQL.deleteOperatorTokens, [row.operator_id]);
        await tx.run(OPERATOR_SQL.deleteOperatorSessions, [row.operator_id]);
        return toOperator(row);
      });
    },

    setOperatorPassword(email, passwordHash) {
      return db.transaction(async (tx) => {
        const row = await tx.one<OperatorRow>(OPERATOR_SQL.setOperatorPassword, [email, passwordHash]);
        if (!row) return undefined;
        await tx.run(OPERATOR_SQL.deleteOperatorSessions, [row.operator_id]);
        return toOperator(row);
      });
    },

    async addOperatorToken({ operatorId, tokenHash, now }) {
      await db.run(OPERATOR_SQL.insertOperatorToken, [tokenHash, operatorId, now]);
    },

    async findOperatorByToken(tokenHash) {
      const row = await db.one<OperatorRow>(OPERATOR_SQL.findOperatorByToken, [tokenHash]);
      return row && toOperator(row);
    },

    async addOperatorSession({ operatorId, sessionHash, now }) {
      await db.run(OPERATOR_SQL.insertOperatorSession, [sessionHash, operatorId, now]);
    },

    async findOperatorBySession(sessionHash, idleSince) {
      const row = await db.one<OperatorRow & { last_seen_at: string | Date }>(OPERATOR_SQL.findOperatorBySession, [sessionHash, idleSince]);
      return row && { ...toOperator(row), lastSeenAt: iso(row.last_seen_at) };
    },

    async touchOperatorSession(sessionHash, now) {
      await db.run(OPERATOR_SQL.touchOperatorSession, [sessionHash, now]);
    },

    async deleteOperatorSession(sessionHash) {
      await db.run(OPERATOR_SQL.deleteOperatorSession, [sessionHash]);
    },
  };
}
