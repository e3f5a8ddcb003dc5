/** What each operator role may do (SPEC §12.1). */
import type { Operator, OperatorAction, OperatorRole } from "../store/store.ts";

export const OPERATOR_ROLES: readonly OperatorRole[] = ["viewer", "operator", "admin"];

/** viewer reads (the audit log too); operator and admin also retry, cancel, pause, resume and redeliver. */
export const mayAct = (role: OperatorRole): boolean => role === "operator" || role === "admin";

/** Only an admin erases a company or takes its export (SPEC §22). */
export const mayAdminister = (role: OperatorRole): boolean => role === "admin";

/** A state-changing call's reason (SPEC §12.2): it lands in the audit log and the item's timeline. */
export const REASON_MAX_LENGTH = 500;

/** Who acts, why and now: what the store writes to the audit log in the action's own transaction. */
export const actionBy = (operator: Pick<Operator, "operatorId" | "email">, reason: string): OperatorAction => ({
  operator: { operatorId: operator.operatorId, email: operator.email },
  reason,
  at: new Date().toISOString(),
});
