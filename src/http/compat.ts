/**
 * Compatibility with clients of the original .NET service (SPEC §1): JSON property names bind
 * case-insensitively (`ApiKey`, `apikey`), and a number field also takes a string holding a
 * number (`"31.5"`), and `null` for an optional property means it is absent. The rules are
 * derived from the route's own TypeBox body schema, so a new
 * field needs no change here. Runs before validation; unknown names are left as they are.
 */
import type { TSchema } from "@sinclair/typebox";

interface Property {
  name: string;
  rule: Rule;
  /** An optional property sent as null is absent; a property that may never be sent is refused as null too. */
  nullMeansAbsent: boolean;
}

interface ObjectRule {
  kind: "object";
  /** canonical name -> property: most clients send the canonical names, found without lowercasing */
  exact: Map<string, Property>;
  /** lower-case name -> property */
  properties: Map<string, Property>;
  additional: Rule;
}
type Rule = ObjectRule | { kind: "array"; items: Rule } | { kind: "number" } | { kind: "other" };

const NUMBER_TEXT = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

function ruleFor(schema: TSchema | undefined): Rule {
  if (!schema) return { kind: "other" };
  if (schema.type === "number" || schema.type === "integer") return { kind: "number" };
  // A list of bodies (a bulk add's items): each element by the element schema's rules.
  if (schema.type === "array") return { kind: "array", items: ruleFor(schema.items as TSchema | undefined) };
  if (schema.type === "object") {
    const required = new Set<string>((schema.required ?? []) as string[]);
    const properties = new Map<string, Property>();
    const exact = new Map<string, Property>();
    for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
      const mayNeverBeSent = typeof child.not === "object" && Object.keys(child.not as object).length === 0;
      const property = { name, rule: ruleFor(child), nullMeansAbsent: !required.has(name) && !mayNeverBeSent };
      properties.set(name.toLowerCase(), property);
      exact.set(name, property);
    }
    const additional = typeof schema.additionalProperties === "object" ? ruleFor(schema.additionalProperties as TSchema) : { kind: "other" as const };
    return { kind: "object", exact, properties, additional };
  }
  return { kind: "other" };
}

function apply(rule: Rule, value: unknown): unknown {
  if (rule.kind === "number") {
    return typeof value === "string" && NUMBER_TEXT.test(value) ? Number(value) : value;
  }
  if (rule.kind === "array") return Array.isArray(value) ? value.map((element) => apply(rule.items, element)) : value;
  if (rule.kind !== "object" || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const canonical: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const child = source[key];
    const known = rule.exact.get(key) ?? rule.properties.get(key.toLowerCase());
    // .NET serialisers write null for unset optional members; it means "absent" there.
    if (child === null && known?.nullMeansAbsent) continue;
    const name = known ? known.name : key;
    const converted = apply(known ? known.rule : rule.additional, child);
    // defineProperty, not assignment, for __proto__: it must stay a plain own property.
    if (name === "__proto__") Object.defineProperty(canonical, name, { value: converted, enumerable: true, writable: true, configurable: true });
    else canonical[name] = converted;
  }
  return canonical;
}

/** Builds the canonicaliser of one body schema. */
export function createCanonicalizer(schema: TSchema): (body: unknown) => unknown {
  const rule = ruleFor(schema);
  return (body) => apply(rule, body);
}
