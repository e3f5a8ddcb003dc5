/**
 * A query string reaches a route only in the shape its schema declares (SPEC §24):
 *
 * - a parameter given more than once (`?a=1&a=2`, or `?a=1&A=2` where names bind in any letter
 *   case) is a 400 naming it, unless the route's schema declares it a list (`type: "array"`);
 * - on a surface that refuses unknown parameters (the operator API) a name its querystring schema
 *   does not declare is a 400 naming it; elsewhere unknown names are ignored, as the original
 *   .NET service ignores them (SPEC §1), and they never reach a handler.
 *
 * One preValidation hook for every route, keyed on the route's own querystring schema, so no
 * route can miss it: a repeated value would otherwise reach a statement as an array (a 500 on
 * SQLite). It runs after the guards (a stranger learns nothing about parameters) and before Ajv,
 * which then checks each value. The console reads its own query and checks it the same way
 * (src/console/params.ts).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { validationError, type FieldErrors } from "../errors.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** "refuse": a query parameter the route's schema does not declare is a 400 (the operator API). */
    unknownQueryParameters?: "refuse";
  }
}

interface QueryRule {
  /** Declared name -> whether it is a list. */
  exact: Map<string, boolean>;
  /** Lower-case name -> declared name, for surfaces whose names bind in any letter case. */
  lower: Map<string, string>;
  /** What an unknown name is told. */
  unknown: string;
}

type JsonSchema = { type?: unknown; properties?: Record<string, JsonSchema> };

const isList = (schema: JsonSchema) => schema.type === "array" || (Array.isArray(schema.type) && schema.type.includes("array"));

function ruleFor(schema: JsonSchema | undefined): QueryRule {
  const properties = Object.entries(schema?.properties ?? {});
  const names = properties.map(([name]) => name);
  return {
    exact: new Map(properties.map(([name, property]) => [name, isList(property)])),
    lower: new Map(names.map((name) => [name.toLowerCase(), name])),
    unknown: names.length === 0 ? "is not a known parameter; this route takes none" : `is not a known parameter; this route takes ${names.join(", ")}`,
  };
}

const rules = new WeakMap<object, QueryRule>();
const NO_SCHEMA = ruleFor(undefined);

function ruleOf(request: FastifyRequest): QueryRule {
  const schema = request.routeOptions.schema?.querystring as JsonSchema | undefined;
  if (!schema) return NO_SCHEMA;
  let rule = rules.get(schema);
  if (!rule) rules.set(schema, (rule = ruleFor(schema)));
  return rule;
}

/**
 * The field errors of a parsed query against a rule; undefined when its shape is fine. Every
 * problem at once, each under the name as the client wrote it.
 */
function queryShapeErrors(query: Record<string, unknown>, rule: QueryRule, refuseUnknown: boolean): FieldErrors | undefined {
  // Maps, not object literals: the names come from the client and may be "__proto__".
  const errors = new Map<string, string[]>();
  const given = new Map<string, { as: string; times: number }>();
  for (const name of Object.keys(query)) {
    const declared = rule.exact.has(name) ? name : refuseUnknown ? undefined : rule.lower.get(name.toLowerCase());
    if (declared === undefined) {
      if (refuseUnknown) errors.set(name, [rule.unknown]);
      continue;
    }
    const value = query[name];
    const seen = given.get(declared) ?? { as: name, times: 0 };
    seen.times += Array.isArray(value) ? value.length : 1;
    given.set(declared, seen);
  }
  for (const [declared, { as, times }] of given) {
    if (times > 1 && !rule.exact.get(declared)) errors.set(as, [`must be given once, not ${times} times`]);
  }
  return errors.size > 0 ? Object.fromEntries(errors) : undefined;
}

/** Surfaces call this on their plugin instance: every route they register refuses unknown query parameters. */
export function refuseUnknownQueryParameters(surface: FastifyInstance): void {
  surface.addHook("onRoute", (route) => {
    route.config = { ...route.config, unknownQueryParameters: "refuse" };
  });
}

export function checkQueryShape(app: FastifyInstance): void {
  // A callback hook: it runs on every request, and an async one costs a promise each.
  app.addHook("preValidation", (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | null;
    if (query === null || typeof query !== "object") return done();
    const errors = queryShapeErrors(query, ruleOf(request), request.routeOptions.config.unknownQueryParameters === "refuse");
    if (!errors) return done();
    done(validationError(errors));
  });
}
