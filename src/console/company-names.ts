/**
 * Companies by name in the console's lists (issue 41): a list holds company numbers; the page
 * reads the names of the few companies on it, and shows "Name #id", or "#id" for a company the
 * store does not know.
 */
import type { Store } from "../store/store.ts";
import { html, type Html } from "./html.ts";

export type CompanyNames = ReadonlyMap<number, string>;

/** The names of the companies on one page. */
export const companyNames = (store: Store, companyIds: Iterable<number>): Promise<CompanyNames> => store.companyNames([...companyIds]);

/** "Acme Dairy #42": the name people know, and the number the CLI and the API take. */
export function companyLabel(companyId: number, names: CompanyNames): Html {
  const name = names.get(companyId);
  return name === undefined ? html`#${companyId}` : html`${name} <span class="muted">#${companyId}</span>`;
}
