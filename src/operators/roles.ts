/** What each operator role may do (SPEC §12.1). */
import type { OperatorRole } from "../store/store.ts";

export const OPERATOR_ROLES: readonly OperatorRole[] = ["viewer", "operator", "admin"];

/** viewer reads (the audit log too); operator and admin also retry, cancel, pause, resume and redeliver. */
export const mayAct = (role: OperatorRole): boolean => role === "operator" || role === "admin";
