/**
 * Companies by name in the console's lists (issue 41): a list holds company numbers; the page
 * reads the names of the few companies on it, and shows "Name #id", or "#id" for a company the
 * store does not know.
 */
import type { Store } from "../store/store.ts";
import { html, type Html } from "./html.ts";

export type CompanyNames = ReadonlyMap<number, string>;

/** The names of the companies on one page: a page shows at most 50 rows, so few distinct companies. */
export async function companyNames(store: Store, companyIds: Iterable<number>): Promise<CompanyNames> {
  const ids = [...new Set(companyIds)];
  const companies = await Promise.all(ids.map((companyId) => store.getCompany(companyId)));
  return new Map(companies.flatMap((company) => (company ? [[company.companyId, company.name] as const] : [])));
}

/** "Acme Dairy #42": the name people know, and the number the CLI and the API take. */
export function companyLabel(companyId: number, names: CompanyNames): Html {
  const name = names.get(companyId);
  return name === undefined ? html`#${companyId}` : html`${name} <span class="muted">#${companyId}</span>`;
}
