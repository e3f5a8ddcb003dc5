/**
 * Every code a failed work item's `error.code` can hold (SPEC §5, §10, §15): the one place an
 * item's failure is named. The OpenAPI schema lists these codes (WorkItemError), operators filter
 * and retry by them, and the bot and the store build every error through `itemError`.
 */

export const ITEM_ERROR_CODES = {
  AUTHORITY_REJECTED: "the Authority rejected the document; `details` names the fields it refused",
  AUTHORITY_ERROR: "the Authority refused the call itself (an unexpected 4xx): calling again would not help",
  AUTHORITY_UNAVAILABLE: "the Authority could not be reached in BOT_MAX_ATTEMPTS attempts",
  AUTHORITY_APPLICATION_UNKNOWN: "the Authority no longer knows the application; the item was not submitted again",
  ORIGINAL_CLOSED: "a change or withdrawal whose original ended (Failed, Cancelled or Withdrawn) before it was filed",
  CHANGE_CUTOFF_PASSED: "a change whose cutoff passed before it could be filed",
} as const;

export type ItemErrorCode = keyof typeof ITEM_ERROR_CODES;

export interface ItemError {
  code: ItemErrorCode;
  message: string;
  details: Array<{ field: string; message: string }>;
}

export const itemError = (code: ItemErrorCode, message: string, details: ItemError["details"] = []): ItemError => ({ code, message, details });

/** The original ended before the change or withdrawal was filed. */
export const originalClosed = (originalWorkItemId: number, originalStatus: string): ItemError =>
  itemError("ORIGINAL_CLOSED", `The original work item ${originalWorkItemId} is ${originalStatus}; this was not filed.`);

/**
 * Whether sending the same item again can end otherwise: only when the Authority was out of
 * reach or lost the application. A rejected document, a refused call, a closed original or a
 * passed cutoff fail the same way a second time.
 */
export const retryCanSucceed = (code: ItemErrorCode): boolean => code === "AUTHORITY_UNAVAILABLE" || code === "AUTHORITY_APPLICATION_UNKNOWN";
