/**
 * The reference page lists the operator routes of SPEC §3 too. @fastify/swagger-ui hides its own
 * page route, so the swagger transform gives GET /docs a schema of its own. Every other route
 * keeps its schema, with the problem examples' `instance` set to that route's own path.
 */
import type { SwaggerTransform } from "@fastify/swagger";
import { Type } from "@sinclair/typebox";
import { publicResponses } from "./problem-schema.ts";

const html = (description: string, example: string) => ({
  description,
  content: { "text/html": { schema: Type.String(), example } },
});

const DocsPageSchema = {
  summary: "This interactive API reference (served offline, no CDN)",
  operationId: "GetDocsPage",
  tags: ["Service"],
  security: [],
  response: { 200: html("the reference page", "<!-- HTML --><title>Swagger UI</title>"), ...publicResponses() },
};

/** The generated OpenAPI 3.1 document itself. */
export const OpenApiDocumentSchema = {
  summary: "The OpenAPI 3.1 document of this API",
  operationId: "GetOpenApiDocument",
  tags: ["Service"],
  security: [],
  response: {
    200: Type.Unsafe<Record<string, unknown>>({
      type: "object",
      additionalProperties: true,
      description: "OpenAPI 3.1 document",
      examples: [{ openapi: "3.1.0", info: { title: "Work-Item API", version: "1.0.0" }, paths: {} }],
    }),
    ...publicResponses(),
  },
};

export const documentDocsRoute: SwaggerTransform = ({ schema, url, route }) => {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.includes("GET") && (url === "/docs" || url === "/docs/")) return { url: "/docs", schema: DocsPageSchema };
  return { schema: withProblemInstance(schema, url.replace(/:\w+/g, "4711")), url };
};

type Media = { example?: unknown };
type ResponseEntry = { content?: Record<string, Media> };

function withProblemInstance<S extends { response?: unknown }>(schema: S, instance: string): S {
  if (!schema?.response || typeof schema.response !== "object") return schema;
  const response: Record<string, unknown> = {};
  for (const [status, entry] of Object.entries(schema.response as Record<string, ResponseEntry>)) {
    const problem = entry?.content?.["application/problem+json"];
    response[status] =
      problem?.example && typeof problem.example === "object"
        ? { ...entry, content: { ...entry.content, "application/problem+json": { ...problem, example: { ...problem.example, instance } } } }
        : entry;
  }
  return { ...schema, response };
}
