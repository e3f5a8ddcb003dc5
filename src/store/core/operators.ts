/**
 * Operators and their credentials (SPEC §12.1): accounts, bearer tokens and console sessions,
 * stored only as hashes (src/operators/ makes and checks them). Disabling an operator ends its
 * sessions and tokens in the same transaction.
 */
import type { DatabasePort, Queryable } from "../port.ts";
import { iso } from "../rows.ts";
import type { Operator, OperatorRole, SignInDetail, SignInMethod, Store } from "../store.ts";
import { OPERATORS_SQL } from "./sql-operators.ts";

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
  | "signInWithIdentity"
>;

export interface OperatorRow {
  operator_id: string;
  email: string;
  role: OperatorRole;
  created_at: string | Date;
  disabled_at: string | Date | null;
  sign_in_method: SignInMethod;
}

export const toOperator = (row: OperatorRow): Operator => ({
  operatorId: row.operator_id,
  email: row.email,
  role: row.role,
  disabled: row.disabled_at !== null,
  createdAt: iso(row.created_at),
  signInMethod: row.sign_in_method,
});

/** A session and its `operator.signin` audit entry, in the caller's transaction. */
async function openSession(tx: Queryable, operator: Pick<Operator, "operatorId" | "email">, sessionHash: string, now: string, signIn: SignInDetail): Promise<void> {
  await tx.run(OPERATORS_SQL.insertOperatorSession, [sessionHash, operator.operatorId, now]);
  const provider = signIn.method === "oidc" ? [signIn.issuer, signIn.subject] : [null, null];
  await tx.run(OPERATORS_SQL.insertSignInAudit, [now, operator.operatorId, operator.email, signIn.method, ...provider]);
}

export function operatorsStore(db: DatabasePort): OperatorPart {
  return {
    async createOperator({ operatorId, email, role, passwordHash, now }) {
      const row = await db.one<OperatorRow>(OPERATORS_SQL.insertOperator, [operatorId, email, role, passwordHash, now]);
      return row && toOperator(row);
    },

    async listOperators() {
      return (await db.all<OperatorRow>(OPERATORS_SQL.listOperators)).map(toOperator);
    },

    async findOperatorByEmail(email) {
      const row = await db.one<OperatorRow & { password_hash: string }>(OPERATORS_SQL.findOperatorByEmail, [email]);
      return row && { ...toOperator(row), passwordHash: row.password_hash };
    },

    disableOperator(email, now) {
      return db.transaction(async (tx) => {
        const row = await tx.one<OperatorRow>(OPERATORS_SQL.disableOperator, [email, now]);
        if (!row) return undefined;
        await tx.run(OPERATORS_SQL.deleteOperatorTokens, [row.operator_id]);
        await tx.run(OPERATORS_SQL.deleteOperatorSessions, [row.operator_id]);
        return toOperator(row);
      });
    },

    setOperatorPassword(email, passwordHash) {
      return db.transaction(async (tx) => {
        const row = await tx.one<OperatorRow>(OPERATORS_SQL.setOperatorPassword, [email, passwordHash]);
        if (!row) return undefined;
        await tx.run(OPERATORS_SQL.deleteOperatorSessions, [row.operator_id]);
        return toOperator(row);
      });
    },

    async addOperatorToken({ operatorId, tokenHash, now }) {
      await db.run(OPERATORS_SQL.insertOperatorToken, [tokenHash, operatorId, now]);
    },

    async findOperatorByToken(tokenHash) {
      const row = await db.one<OperatorRow>(OPERATORS_SQL.findOperatorByToken, [tokenHash]);
      return row && toOperator(row);
    },

    addOperatorSession({ operator, sessionHash, now, signIn }) {
      return db.transaction((tx) => openSession(tx, operator, sessionHash, now, signIn));
    },

    signInWithIdentity({ identity, newOperatorId, sessionHash, now }) {
      const { issuer, subject } = identity;
      return db.transaction(async (tx) => {
        let row = await tx.one<OperatorRow>(OPERATORS_SQL.findOperatorByIdentity, [issuer, subject]);
        let created = false;
        if (!row) {
          row = await tx.one<OperatorRow>(OPERATORS_SQL.insertProviderOperator, [newOperatorId, identity.email, identity.role, now]);
          if (!row) return { kind: "emailTaken" } as const;
          await tx.run(OPERATORS_SQL.insertIdentity, [issuer, subject, row.operator_id, now]);
          created = true;
        }
        if (row.disabled_at !== null) return { kind: "disabled", operator: toOperator(row) } as const;
        if (row.role !== identity.role) row = (await tx.one<OperatorRow>(OPERATORS_SQL.setOperatorRole, [row.operator_id, identity.role]))!;
        const operator = toOperator(row);
        await openSession(tx, operator, sessionHash, now, { method: "oidc", issuer, subject });
        return { kind: "signedIn", operator, created } as const;
      });
    },

    async findOperatorBySession(sessionHash, idleSince) {
      const row = await db.one<OperatorRow & { last_seen_at: string | Date }>(OPERATORS_SQL.findOperatorBySession, [sessionHash, idleSince]);
      return row && { ...toOperator(row), lastSeenAt: iso(row.last_seen_at) };
    },

    async touchOperatorSession(sessionHash, now) {
      await db.run(OPERATORS_SQL.touchOperatorSession, [sessionHash, now]);
    },

    async deleteOperatorSession(sessionHash) {
      await db.run(OPERATORS_SQL.deleteOperatorSession, [sessionHash]);
    },
  };
}
