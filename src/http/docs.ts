/**
 * The reference page lists the operator routes of SPEC §3 too. @fastify/swagger-ui hides its own
 * page route, so the swagger transform gives GET /docs a schema of its own; every other route
 * keeps the schema it was registered with.
 */
import type { SwaggerTransform } from "@fastify/swagger";
import { Type } from "@sinclair/typebox";

const html = (description: string, example: string) => ({
  description,
  content: { "text/html": { schema: Type.String(), example } },
});

const DocsPageSchema = {
  summary: "This interactive API reference (served offline, no CDN)",
  tags: ["Operations"],
  response: { 200: html("the reference page", "<!-- HTML --><title>Swagger UI</title>") },
};

/** The generated OpenAPI 3.1 document itself. */
export const OpenApiDocumentSchema = {
  summary: "The OpenAPI 3.1 document of this API",
  tags: ["Operations"],
  response: {
    200: Type.Unsafe<Record<string, unknown>>({
      type: "object",
      additionalProperties: true,
      description: "OpenAPI 3.1 document",
      examples: [{ openapi: "3.1.0", info: { title: "Work-Item API", version: "1.0.0" }, paths: {} }],
    }),
  },
};

export const documentDocsRoute: SwaggerTransform = ({ schema, url, route }) => {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.includes("GET") && (url === "/docs" || url === "/docs/")) return { url: "/docs", schema: DocsPageSchema };
  return { schema, url };
};
