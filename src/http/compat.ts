/**
 * Compatibility with clients of the original .NET service (SPEC §1): JSON property names bind
 * case-insensitively (`ApiKey`, `apikey`), and a number field also takes a string holding a
 * number (`"31.5"`), and `null` for an optional property means it is absent. The rules are
 * derived from the route's own TypeBox body schema, so a new
 * field needs no change here. Runs before validation; unknown names are left as they are.
 */
import type { TSchema } from "@sinclair/typebox";

interface ObjectRule {
  kind: "object";
  /** lower-case name -> canonical name and the rule for its value */
  properties: Map<string, { name: string; rule: Rule; required: boolean }>;
  additional: Rule;
}
type Rule = ObjectRule | { kind: "number" } | { kind: "other" };

const NUMBER_TEXT = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

function ruleFor(schema: TSchema | undefined): Rule {
  if (!schema) return { kind: "other" };
  if (schema.type === "number" || schema.type === "integer") return { kind: "number" };
  if (schema.type === "object") {
    const required = new Set<string>((schema.required ?? []) as string[]);
    const properties = new Map<string, { name: string; rule: Rule; required: boolean }>();
    for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
      properties.set(name.toLowerCase(), { name, rule: ruleFor(child), required: required.has(name) });
    }
    const additional = typeof schema.additionalProperties === "object" ? ruleFor(schema.additionalProperties as TSchema) : { kind: "other" as const };
    return { kind: "object", properties, additional };
  }
  return { kind: "other" };
}

function apply(rule: Rule, value: unknown): unknown {
  if (rule.kind === "number") {
    return typeof value === "string" && NUMBER_TEXT.test(value) ? Number(value) : value;
  }
  if (rule.kind !== "object" || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const canonical: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const known = rule.properties.get(key.toLowerCase());
    // .NET serialisers write null for unset optional members; it means "absent" there.
    if (child === null && known && !known.required) continue;
    const name = known ? known.name : key;
    // defineProperty, not assignment: a key named __proto__ stays a plain own property.
    Object.defineProperty(canonical, name, { value: apply(known ? known.rule : rule.additional, child), enumerable: true, writable: true, configurable: true });
  }
  return canonical;
}

/** Builds the canonicaliser of one body schema. */
export function createCanonicalizer(schema: TSchema): (body: unknown) => unknown {
  const rule = ruleFor(schema);
  return (body) => apply(rule, body);
}
