/**
 * Operator accounts, as the CLI manages them (SPEC §12.1): the password and token are made
 * here, shown once by the caller, and only their hashes reach the store.
 */
import type { Operator, OperatorRole, Store } from "../store/store.ts";
import { hashCredential, newOperatorId, newOperatorToken } from "./credentials.ts";
import { normaliseEmail } from "./operator-auth.ts";
import { hashPassword, newPassword } from "./passwords.ts";
import { OPERATOR_ROLES } from "./roles.ts";

export class OperatorAccountError extends Error {}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
export const isOperatorEmail = (email: string): boolean => EMAIL.test(email);

export function parseOperatorEmail(value: string): string {
  const email = normaliseEmail(value);
  if (!isOperatorEmail(email)) throw new OperatorAccountError(`not an e-mail address: ${JSON.stringify(value)}`);
  return email;
}

export function parseOperatorRole(value: string): OperatorRole {
  if (!(OPERATOR_ROLES as readonly string[]).includes(value)) throw new OperatorAccountError(`role must be one of ${OPERATOR_ROLES.join(", ")}`);
  return value as OperatorRole;
}

export async function createOperatorAccount(store: Store, input: { email: string; role: string }): Promise<Operator & { password: string }> {
  const email = parseOperatorEmail(input.email);
  const role = parseOperatorRole(input.role);
  const password = newPassword();
  const operator = await store.createOperator({
    operatorId: newOperatorId(),
    email,
    role,
    passwordHash: await hashPassword(password),
    now: new Date().toISOString(),
  });
  if (!operator) throw new OperatorAccountError(`an operator with e-mail ${email} exists already`);
  return { ...operator, password };
}

export async function resetOperatorPassword(store: Store, emailInput: string): Promise<{ email: string; password: string }> {
  const email = parseOperatorEmail(emailInput);
  const operator = await store.findOperatorByEmail(email);
  if (operator?.signInMethod === "oidc") throw new OperatorAccountError(`operator ${email} signs in with the identity provider and has no password`);
  const password = newPassword();
  if (!(await store.setOperatorPassword(email, await hashPassword(password)))) throw new OperatorAccountError(`no operator with e-mail ${email}`);
  return { email, password };
}

export async function disableOperatorAccount(store: Store, emailInput: string): Promise<Operator> {
  const email = parseOperatorEmail(emailInput);
  const operator = await store.disableOperator(email, new Date().toISOString());
  if (!operator) throw new OperatorAccountError(`no operator with e-mail ${email}`);
  return operator;
}

/** A new bearer token for the operator API; every call makes another one. */
export async function issueOperatorToken(store: Store, emailInput: string): Promise<{ operatorId: string; token: string }> {
  const email = parseOperatorEmail(emailInput);
  const operator = await store.findOperatorByEmail(email);
  if (!operator) throw new OperatorAccountError(`no operator with e-mail ${email}`);
  if (operator.disabled) throw new OperatorAccountError(`operator ${email} is disabled`);
  const token = newOperatorToken();
  await store.addOperatorToken({ operatorId: operator.operatorId, tokenHash: hashCredential(token), now: new Date().toISOString() });
  return { operatorId: operator.operatorId, token };
}
