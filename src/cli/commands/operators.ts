/**
 * Operator accounts (SPEC §12.1): create, list, disable, reset a password, issue an API token.
 * Passwords and tokens are shown once; only their hashes are kept, and no command prints a hash.
 */
import {
  createOperatorAccount, disableOperatorAccount, issueOperatorToken, OperatorAccountError, resetOperatorPassword,
} from "../../operators/accounts.ts";
import { OPERATOR_ROLES } from "../../operators/roles.ts";
import type { Operator, Store } from "../../store/store.ts";
import { CommandFailedError, requiredText, UsageError, type Command, type Flags } from "../command.ts";

const EMAIL_OPTION = { email: { type: "string" } } as const;

/** An account that cannot be changed as asked (unknown, taken, disabled) is a failure, exit 1. */
async function asCommand<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OperatorAccountError) throw new CommandFailedError(error.message);
    throw error;
  }
}

function requiredRole(flags: Flags): string {
  const role = requiredText(flags, "role");
  if (!(OPERATOR_ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${OPERATOR_ROLES.join(", ")}, got ${JSON.stringify(role)}`);
  return role;
}

/** What may be shown of an operator: never a password, hash or token. */
const shown = ({ operatorId, email, role, disabled, createdAt, signInMethod }: Operator) => ({ operatorId, email, role, disabled, createdAt, signInMethod });

export const operatorsCreate: Command = {
  name: "operators create",
  usage: `operators create --email E --role ${OPERATOR_ROLES.join("|")} [--json]`,
  summary: "create an operator; the password is shown once",
  options: { ...EMAIL_OPTION, role: { type: "string" } },
  async run({ store, flags }) {
    const input = { email: requiredText(flags, "email"), role: requiredRole(flags) };
    const { operatorId, email, role, password } = await asCommand(() => createOperatorAccount(store, input));
    return { operatorId, email, role, password };
  },
  human: (result) => {
    const { operatorId, email, role, password } = result as { operatorId: string; email: string; role: string; password: string };
    return [`Created operator ${operatorId} (${email}, ${role}).`, `  password: ${password}`, "Hand the password over now: it is not shown again (only its hash is kept)."].join("\n");
  },
};

export const operatorsList: Command = {
  name: "operators list",
  usage: "operators list [--json]",
  summary: "list the operators and how each signs in, password or oidc (never a password or token)",
  options: {},
  async run({ store }) {
    return (await store.listOperators()).map(shown);
  },
  human: (result) => {
    const operators = result as Operator[];
    if (operators.length === 0) return "No operators.";
    return operators.map((o) => `${o.operatorId}  ${o.email}  ${o.role}  ${o.disabled ? "disabled" : "active"}  signs in with ${o.signInMethod}  created ${o.createdAt}`).join("\n");
  },
};

/** A command that takes only --email and changes that operator's account. */
function byEmail<T>(spec: { name: string; summary: string; act: (store: Store, email: string) => Promise<T>; human: (result: T) => string }): Command {
  return {
    name: spec.name,
    usage: `${spec.name} --email E [--json]`,
    summary: spec.summary,
    options: EMAIL_OPTION,
    async run({ store, flags }) {
      const email = requiredText(flags, "email");
      return asCommand(() => spec.act(store, email));
    },
    human: (result) => spec.human(result as T),
  };
}

export const operatorsDisable = byEmail({
  name: "operators disable",
  summary: "disable an operator; its sessions and tokens stop working within 5 seconds",
  act: async (store, email) => shown(await disableOperatorAccount(store, email)),
  human: (operator) => `Disabled operator ${operator.email}.`,
});

export const operatorsResetPassword = byEmail({
  name: "operators reset-password",
  summary: "give an operator a new password (shown once); the old one stops working",
  act: resetOperatorPassword,
  human: ({ email, password }) => [`New password for ${email}:`, `  password: ${password}`, "It is not shown again."].join("\n"),
});

export const operatorsToken = byEmail({
  name: "operators token",
  summary: "issue a bearer token for the operator API (shown once; each call makes a new one)",
  act: issueOperatorToken,
  human: ({ operatorId, token }) =>
    [`Token for operator ${operatorId}:`, `  token: ${token}`, "Send it as Authorization: Bearer <token> to /api/Operator/*. It is not shown again."].join("\n"),
});

export const operatorCommands: Command[] = [operatorsCreate, operatorsList, operatorsDisable, operatorsResetPassword, operatorsToken];
