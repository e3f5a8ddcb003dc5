/**
 * The console's only way to make markup: `html` escapes every interpolated value unless it is
 * already `Html` made by this module, so integrator input (customer references, error messages,
 * webhook URLs) always renders as text.
 */

/** Markup known to be safe: produced by `html` (or `raw` on a constant). */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** A value `html` accepts: text to escape, markup, nothing, or a list of these. */
export type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

export const escapeText = (text: string): string => text.replace(/[&<>"'`]/g, (char) => ENTITIES[char] ?? char);

function render(value: Interpolation): string {
  if (value instanceof Html) return value.markup;
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return (value as readonly Interpolation[]).map(render).join("");
  return escapeText(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let markup = strings[0] ?? "";
  values.forEach((value, index) => {
    markup += render(value) + (strings[index + 1] ?? "");
  });
  return new Html(markup);
}

/** A query string built from the given parameters, dropping empty ones; values are URL-encoded (and escaped by `html`). */
export function queryString(parameters: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
