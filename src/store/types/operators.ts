/**
 * The store's operators (SPEC §12.1): their identities, tokens and console sessions; not tenant
 * data (core/sql-operators.ts).
 */

export type OperatorRole = "viewer" | "operator" | "admin";

export interface Operator {
  operatorId: string;
  email: string;
  role: OperatorRole;
  disabled: boolean;
  createdAt: string;
}

export interface OperatorWithHash extends Operator {
  /** scrypt, see src/operators/passwords.ts. */
  passwordHash: string;
}

/** Operators and their credentials (CLI, console sign-in, operator API). */
export interface OperatorsStore {
  /** Undefined when the e-mail is taken. */
  createOperator(input: { operatorId: string; email: string; role: OperatorRole; passwordHash: string; now: string }): Promise<Operator | undefined>;
  listOperators(): Promise<Operator[]>;
  findOperatorByEmail(email: string): Promise<OperatorWithHash | undefined>;
  /** Disables the operator and, in the same transaction, ends its sessions and tokens. Undefined when unknown. */
  disableOperator(email: string, now: string): Promise<Operator | undefined>;
  /** A new password hash; the operator's sessions end with the old password. Undefined when unknown. */
  setOperatorPassword(email: string, passwordHash: string): Promise<Operator | undefined>;
  addOperatorToken(input: { operatorId: string; tokenHash: string; now: string }): Promise<void>;
  /** The enabled operator holding the token, or undefined. */
  findOperatorByToken(tokenHash: string): Promise<Operator | undefined>;
  addOperatorSession(input: { operatorId: string; sessionHash: string; now: string }): Promise<void>;
  /**
   * The enabled operator of a session seen at or after `idleSince`, with when it was last seen;
   * undefined for an unknown, idle or disabled one.
   */
  findOperatorBySession(sessionHash: string, idleSince: string): Promise<(Operator & { lastSeenAt: string }) | undefined>;
  touchOperatorSession(sessionHash: string, now: string): Promise<void>;
  deleteOperatorSession(sessionHash: string): Promise<void>;
}
