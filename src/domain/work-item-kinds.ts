/**
 * The kinds of work item (SPEC §4, §15) and what each decides, in one place. A `create` files a
 * new document; a follow-up (a `change` or a `withdraw`) is filed against the document its
 * original filed, and its success changes that original.
 *
 * Every layer keeps what it does per kind in a table keyed by these names (a `Record<FollowUpKind,
 * …>`), and every list of kinds (timeline entries, history entries, authority calls, the kinds the
 * database takes) is derived from them, so a new kind is a compile error in each place that must
 * learn it; docs/architecture.md lists them.
 */

export const FOLLOW_UP_KINDS = ["change", "withdraw"] as const;
export type FollowUpKind = (typeof FOLLOW_UP_KINDS)[number];

export const WORK_ITEM_KINDS = ["create", ...FOLLOW_UP_KINDS] as const;
export type WorkItemKindName = (typeof WORK_ITEM_KINDS)[number];

export interface FollowUpRules {
  /** The item as timelines and answers name it: "Change 12 received". */
  noun: string;
  /** The item opening a sentence about its original: "A change of work item 4711". */
  ofOriginal: string;
  /** What the original's document becomes: "The document cannot be changed". */
  done: string;
  /** It must be filed before the original's change cutoff (CHANGE_CUTOFF_HOURS before its exportDate). */
  cutoff: boolean;
  /** Its success makes a new revision of the original's document. */
  revises: boolean;
}

export const FOLLOW_UP_RULES: Record<FollowUpKind, FollowUpRules> = {
  change: { noun: "Change", ofOriginal: "A change", done: "changed", cutoff: true, revises: true },
  withdraw: { noun: "Withdrawal", ofOriginal: "The withdrawal", done: "withdrawn", cutoff: false, revises: false },
};

export const isFollowUp = (kind: string): kind is FollowUpKind => (FOLLOW_UP_KINDS as readonly string[]).includes(kind);
