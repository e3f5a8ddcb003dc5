/**
 * GET /console/assets/:name: the console's stylesheet and script, read once at start; no build
 * step. And GET /favicon.ico, which browsers ask for on every page and report as an error when
 * it is missing (SPEC §16).
 */
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { ApiError } from "../errors.ts";

const ASSETS: Readonly<Record<string, string>> = {
  "console.css": "text/css; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
};

const FAVICON = "favicon.ico";

export function registerFavicon(app: FastifyInstance): void {
  const icon = readFileSync(new URL(`./assets/${FAVICON}`, import.meta.url));
  app.get(`/${FAVICON}`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type("image/x-icon").header("cache-control", "public, max-age=86400").send(icon),
  );
}

export function registerAssets(app: FastifyInstance): void {
  const files = new Map(Object.entries(ASSETS).map(([name, type]) => [name, { type, body: readFileSync(new URL(`./assets/${name}`, import.meta.url)) }]));
  app.get<{ Params: { name: string } }>("/assets/:name", async (request, reply) => {
    const file = files.get(request.params.name);
    if (!file) throw new ApiError("NOT_FOUND", "No such file.");
    return reply.type(file.type).header("cache-control", "public, max-age=300").send(file.body);
  });
}
