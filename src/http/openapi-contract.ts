/**
 * Turns the document @fastify/swagger generates from the route schemas into a contract that
 * generators (openapi-typescript, NSwag) and linters (@redocly/cli) can use (SPEC §11.4). The
 * route schemas stay the single source; this only changes how the document spells them:
 *
 * - every schema with a `title` becomes `components.schemas[title]`, and each place that used it
 *   a `$ref` to it (two different schemas with one title are a programming error, and throw);
 * - `errorMessage`, a keyword of the validator's (ajv-errors), is left out: it is no JSON Schema;
 * - an object with named properties whose `additionalProperties` is a schema (the work item body,
 *   open to extra translation objects, SPEC §1) says so with `unevaluatedProperties`, which means
 *   the same for such a schema, because generators turn `additionalProperties` into an index
 *   signature that every named property must also fit, so no body with only the named fields
 *   would type-check;
 * - the webhook events (`webhooks`, the section the caller passes in: http knows no webhooks), and
 *   `security: []` on operations that name none.
 */
import { isDeepStrictEqual } from "node:util";

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (value: Json): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** Keys whose values are data (examples, defaults), never schemas to rewrite. */
const DATA_KEYS = new Set(["example", "examples", "default", "const", "enum"]);

const looksLikeSchema = (node: JsonObject) => ["type", "properties", "anyOf", "oneOf", "allOf", "$ref", "enum", "const"].some((key) => key in node);

export function finishOpenApiDocument<T extends object>(generated: T, webhooks: Record<string, unknown>): T {
  const document = structuredClone(generated) as unknown as JsonObject;
  const components = (isObject(document.components) ? document.components : (document.components = {})) as JsonObject;
  const schemas: JsonObject = {};

  function rewrite(node: Json): Json {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "errorMessage") continue;
      out[key] = DATA_KEYS.has(key) ? value : rewrite(value);
    }
    // What @fastify/swagger does to route schemas, for the ones that come through no route (webhooks).
    if ("const" in out) {
      out.enum = [out.const];
      delete out.const;
    }
    if (isObject(out.patternProperties) && Object.keys(out.patternProperties).join() === "^(.*)$") {
      out.additionalProperties = out.patternProperties["^(.*)$"];
      delete out.patternProperties;
    }
    if (isObject(out.properties) && isObject(out.additionalProperties)) {
      out.unevaluatedProperties = out.additionalProperties;
      delete out.additionalProperties;
    }
    if (typeof out.title !== "string" || !looksLikeSchema(out)) return out;
    const name = out.title;
    const known = schemas[name] as JsonObject | undefined;
    // @fastify/swagger moves a response schema's own `examples` to the media object, so one use
    // of a schema may lack them; the component keeps them.
    if (known !== undefined && !isDeepStrictEqual(withoutExamples(known), withoutExamples(out))) {
      throw new Error(`Two different schemas are titled ${name}; give one of them another title.`);
    }
    if (known === undefined || (known.examples === undefined && out.examples !== undefined)) schemas[name] = out;
    return { $ref: `#/components/schemas/${name}` };
  }

  document.paths = rewrite(document.paths ?? {});
  document.webhooks = rewrite(webhooks);
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject)) {
      if (isObject(operation) && operation.security === undefined) operation.security = [];
    }
  }
  components.schemas = { ...(isObject(components.schemas) ? components.schemas : {}), ...sortedByName(schemas) };
  return document as unknown as T;
}

function withoutExamples(schema: JsonObject): JsonObject {
  const { examples: _examples, ...rest } = schema;
  return rest;
}

const sortedByName = (record: JsonObject) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
