/** Operators for route tests: an account of a role and an operator API token, made as the CLI makes them. */
import { createOperatorAccount, issueOperatorToken } from "../../src/operators/accounts.ts";
import type { OperatorRole, Store } from "../../src/store/store.ts";

export interface TestOperator {
  operatorId: string;
  email: string;
  role: OperatorRole;
  token: string;
}

let made = 0;

export async function createTestOperator(store: Store, role: OperatorRole, email = `${role}-${++made}@ops.example`): Promise<TestOperator> {
  const account = await createOperatorAccount(store, { email, role });
  const { token } = await issueOperatorToken(store, account.email);
  return { operatorId: account.operatorId, email: account.email, role: account.role, token };
}
