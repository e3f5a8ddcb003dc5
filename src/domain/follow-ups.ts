/** Changes and withdrawals of a filed document (SPEC §15): why one fails without a call. */
import type { WorkItemError } from "./views.ts";

/** The original ended (Failed, Cancelled or Withdrawn) before the change or withdrawal was filed. */
export const originalClosed = (originalWorkItemId: number, originalStatus: string): WorkItemError => ({
  code: "ORIGINAL_CLOSED",
  message: `The original work item ${originalWorkItemId} is ${originalStatus}; this was not filed.`,
  details: [],
});
