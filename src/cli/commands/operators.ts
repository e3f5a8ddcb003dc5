/**
 * Operator accounts (SPEC §12.1): create, list, disable, reset a password, issue an API token.
 * Passwords and tokens are shown once; only their hashes are kept, and no command prints a hash.
 */
import {
  createOperatorAccount, disableOperatorAccount, issueOperatorToken, OperatorAccountError, resetOperatorPassword,
} from "../../operators/accounts.ts";
import { OPERATOR_ROLES } from "../../operators/roles.ts";
import type { Operator } from "../../store/store.ts";
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
const shown = ({ operatorId, email, role, disabled, createdAt }: Operator) => ({ operatorId, email, role, disabled, createdAt });

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
  summary: "list the operators (never a password or token)",
  options: {},
  async run({ store }) {
    return (await store.listOperators()).map(shown);
  },
  human: (result) => {
    const operators = result as Operator[];
    if (operators.length === 0) return "No operators.";
    return operators.map((o) => `${o.operatorId}  ${o.email}  ${o.role}  ${o.disabled ? "disabled" : "active"}  created ${o.createdAt}`).join("\n");
  },
};

export const operatorsDisable: Command = {
  name: "operators disable",
  usage: "operators disable --email E [--json]",
  summary: "disable an operator; its sessions and tokens stop working within 5 seconds",
  options: EMAIL_OPTION,
  async run({ store, flags }) {
    const email = requiredText(flags, "email");
    return shown(await asCommand(() => disableOperatorAccount(store, email)));
  },
  human: (result) => `Disabled operator ${(result as Operator).email}.`,
};

export const operatorsResetPassword: Command = {
  name: "operators reset-password",
  usage: "operators reset-password --email E [--json]",
  summary: "give an operator a new password (shown once); the old one stops working",
  options: EMAIL_OPTION,
  async run({ store, flags }) {
    const email = requiredText(flags, "email");
    return asCommand(() => resetOperatorPassword(store, email));
  },
  human: (result) => {
    const { email, password } = result as { email: string; password: string };
    return [`New password for ${email}:`, `  password: ${password}`, "It is not shown again."].join("\n");
  },
};

export const operatorsToken: Command = {
  name: "operators token",
  usage: "operators token --email E [--json]",
  summary: "issue a bearer token for the operator API (shown once; each call makes a new one)",
  options: EMAIL_OPTION,
  async run({ store, flags }) {
    const email = requiredText(flags, "email");
    return asCommand(() => issueOperatorToken(store, email));
  },
  human: (result) => {
    const { operatorId, token } = result as { operatorId: string; token: string };
    return [`Token for operator ${operatorId}:`, `  token: ${token}`, "Send it as Authorization: Bearer <token> to /api/Operator/*. It is not shown again."].join("\n");
  },
};

export const operatorCommands: Command[] = [operatorsCreate, operatorsList, operatorsDisable, operatorsResetPassword, operatorsToken];
