/**
 * The store's operators (SPEC §12.1): their identities, tokens and console sessions; not tenant
 * data (core/sql-operators.ts).
 */

export type OperatorRole = "viewer" | "operator" | "admin";

/** How an operator signs in to the console: a password from the CLI, or the identity provider (SPEC §19). */
export type SignInMethod = "password" | "oidc";

/** How one sign-in happened, as its audit entry records it: for OpenID Connect, who at which provider. */
export type SignInDetail = { method: "password" } | { method: "oidc"; issuer: string; subject: string };

export interface Operator {
  operatorId: string;
  email: string;
  role: OperatorRole;
  disabled: boolean;
  createdAt: string;
  signInMethod: SignInMethod;
}

export interface OperatorWithHash extends Operator {
  /** scrypt, see src/operators/passwords.ts; unusable for an operator that signs in with OpenID Connect. */
  passwordHash: string;
}

/** An operator as the identity provider names it (SPEC §19), with the role its claim maps to now. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  /** Used only when the first sign-in creates the operator. */
  email: string;
  role: OperatorRole;
}

export type IdentitySignIn =
  | { kind: "signedIn"; operator: Operator; created: boolean }
  | { kind: "disabled"; operator: Operator }
  /** The first sign-in of this identity, with an e-mail another operator has already. */
  | { kind: "emailTaken" };

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
  /** Opens a console session and, in the same transaction, writes its `operator.signin` audit entry. */
  addOperatorSession(input: { operator: Pick<Operator, "operatorId" | "email">; sessionHash: string; now: string; signIn: SignInDetail }): Promise<void>;
  /**
   * A sign-in through the identity provider, in one transaction: the operator known by issuer and
   * subject (created on its first sign-in, with `newOperatorId`) takes the role given, and a
   * session opens with its audit entry. No session for a disabled operator, nor when a first
   * sign-in's e-mail is another operator's.
   */
  signInWithIdentity(input: { identity: ProviderIdentity; newOperatorId: string; sessionHash: string; now: string }): Promise<IdentitySignIn>;
  /**
   * The enabled operator of a session seen at or after `idleSince`, with when it was last seen;
   * undefined for an unknown, idle or disabled one.
   */
  findOperatorBySession(sessionHash: string, idleSince: string): Promise<(Operator & { lastSeenAt: string }) | undefined>;
  touchOperatorSession(sessionHash: string, now: string): Promise<void>;
  deleteOperatorSession(sessionHash: string): Promise<void>;
}
