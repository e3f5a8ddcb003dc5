/**
 * The route list as the service publishes it in /openapi.json, so security tests cover every
 * route, including ones added after the test was written.
 */
import type { FastifyInstance } from "fastify";

export interface OpenApiParameter {
  in: "path" | "query" | "header";
  name: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

export interface ApiOperation {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The OpenAPI template, e.g. /api/AuthorityRvdm/WorkItem/{workItemId}. */
  path: string;
  pathParams: string[];
  queryParams: OpenApiParameter[];
  headerParams: OpenApiParameter[];
  /** The JSON request body schema, when the route takes one. */
  jsonBody: Record<string, unknown> | undefined;
  /** The request body's example, when the document gives one beside the schema. */
  jsonExample: unknown;
  /** Behind the bearer guard (integrator routes). */
  protected: boolean;
  /** Behind the operator guard (/api/Operator/*, operator tokens, every company). */
  operator: boolean;
  /** Property names of the 200 JSON response. */
  responseProperties: string[];
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown>; example?: unknown }> };
  security?: Array<Record<string, unknown>>;
  responses?: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }>;
}

export async function apiOperations(app: FastifyInstance): Promise<ApiOperation[]> {
  const response = await app.inject({ url: "/openapi.json" });
  if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}`);
  const document = inlineRefs(response.json<{ paths: Record<string, Record<string, OpenApiOperation>>; components?: { schemas?: Record<string, unknown> } }>());
  const operations: ApiOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const parameters = operation.parameters ?? [];
      operations.push({
        method: method.toUpperCase() as ApiOperation["method"],
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!),
        queryParams: parameters.filter((p) => p.in === "query"),
        headerParams: parameters.filter((p) => p.in === "header"),
        jsonBody: operation.requestBody?.content?.["application/json"]?.schema,
        jsonExample: operation.requestBody?.content?.["application/json"]?.example,
        protected: (operation.security ?? []).some((requirement) => "bearer" in requirement),
        operator: (operation.security ?? []).some((requirement) => "operatorToken" in requirement),
        responseProperties: Object.keys(operation.responses?.["200"]?.content?.["application/json"]?.schema?.properties ?? {}),
      });
    }
  }
  if (operations.length === 0) throw new Error("/openapi.json lists no operations");
  return operations;
}

/** The document with every `#/components/schemas/…` reference replaced by the schema it names. */
function inlineRefs<T extends { components?: { schemas?: Record<string, unknown> } }>(document: T): T {
  const schemas = document.components?.schemas ?? {};
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (typeof node !== "object" || node === null) return node;
    const { $ref, ...rest } = node as Record<string, unknown>;
    if (typeof $ref === "string" && $ref.startsWith("#/components/schemas/")) return inline(schemas[$ref.slice("#/components/schemas/".length)]);
    return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(value)]));
  };
  return inline(document) as T;
}

/** Fills the path template; every `{name}` must have a value. */
export function fillPath(operation: ApiOperation, values: Record<string, string | number>): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`no value for {${name}} of ${operation.method} ${operation.path}`);
    return encodeURIComponent(String(values[name]));
  });
}

export const describeOperation = (operation: ApiOperation) => `${operation.method} ${operation.path}`;

/** A body the route's schema accepts: the document's example of it, or the schema's first, or an empty object. */
export function exampleBody(operation: ApiOperation): unknown {
  if (operation.jsonExample !== undefined) return operation.jsonExample;
  const examples = operation.jsonBody?.examples;
  return Array.isArray(examples) && examples.length > 0 ? examples[0] : {};
}
