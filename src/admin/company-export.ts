/**
 * A company's export (SPEC §22): every item of it, its view and its timeline, as JSON Lines in id
 * order: a keyset page at a time, so memory stays the same whatever the company's size. The CLI
 * (`companies export`) writes it to stdout, an admin gets it from the operator API; a line is what
 * `GET /api/Operator/WorkItems/{id}` answers for the item.
 */
import type { Store } from "../store/store.ts";

/** Items a page reads (three statements); a page is one chunk of the stream. */
export const EXPORT_PAGE_ITEMS = 500;

export interface ExportOptions {
  /** Only items added at or after this instant (ISO 8601). */
  since?: string;
  pageItems?: number;
  /** After each page: the items so far and the last one's id. */
  onPage?: (progress: { items: number; lastWorkItemId: number }) => void;
}

/** The export's chunks: each the JSON Lines of one page, every line ending in a newline. */
export async function* exportLines(store: Store, companyId: number, options: ExportOptions = {}): AsyncGenerator<string> {
  const limit = options.pageItems ?? EXPORT_PAGE_ITEMS;
  let afterWorkItemId = 0;
  let items = 0;
  for (;;) {
    const page = await store.exportWorkItems(companyId, { afterWorkItemId, limit, ...(options.since === undefined ? {} : { since: options.since }) });
    if (page.length === 0) return;
    yield `${page.map(({ item, timeline }) => JSON.stringify({ ...item, timeline })).join("\n")}\n`;
    afterWorkItemId = page.at(-1)!.item.workItemId;
    items += page.length;
    options.onPage?.({ items, lastWorkItemId: afterWorkItemId });
    if (page.length < limit) return;
  }
}

/** An export's `since`: a date (its start, UTC) or an instant in ISO 8601; undefined when it is neither. */
export function parseSince(text: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) return undefined;
  const instant = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(instant)) return undefined;
  // A date that does not exist (2026-02-30) would roll over: refuse it.
  if (new Date(instant).toISOString().slice(0, 10) !== text.slice(0, 10) && text.length === 10) return undefined;
  return new Date(instant).toISOString();
}
