// The framework floor: Fastify 5 with none of our hooks, auth, rate limit, metrics or schemas,
// answering three routes as ours do, through dist/'s own store on the server's SQLite file:
// Ping with the same text (formatted once a second, as ours is), WorkItem/{id} with the store's
// view text, and the WorkItems page built the way the route builds it. The company is read from
// the token without verifying it. No route of ours can be cheaper than its floor, so a floor's
// share of the ceiling is the most a target on that route can ask of a Fastify service.
//
// usage: node fastify-floor.mjs PORT SQLITE_PATH DIST_DIR
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [port = "0", sqlitePath, distDir] = process.argv.slice(2);
if (!sqlitePath || !distDir) throw new Error("usage: node fastify-floor.mjs PORT SQLITE_PATH DIST_DIR");
const fromDist = (path) => import(pathToFileURL(join(distDir, path)).href);
// Before anything else, as the server does (src/lib/tick-object-shape.ts).
await fromDist("lib/tick-object-shape.js");
const { default: Fastify } = await import("fastify");
const { openStore } = await fromDist("store/open-store.js");
const { createPongText } = await fromDist("surfaces/shared/ping.js");
const { decodeCursor } = await fromDist("surfaces/shared/keyset-cursor.js");
const { workItemPageText } = await fromDist("surfaces/authority-rvdm/list-work-items.js");

const store = await openStore({ kind: "sqlite", path: sqlitePath });
const pongText = createPongText(process.env.TZ ?? "UTC");
const JSON_TYPE = "application/json; charset=utf-8";

function companyOf(request) {
  const payload = (request.headers.authorization ?? "").split(".")[1] ?? "";
  return Number(JSON.parse(Buffer.from(payload, "base64url").toString()).CompanyId);
}

const app = Fastify({ logger: false });
app.get("/api/AuthorityRvdm/Ping", (_request, reply) => {
  reply.type("text/plain; charset=utf-8").send(pongText());
});
app.get("/api/AuthorityRvdm/WorkItem/:workItemId", async (request, reply) => {
  const view = await store.getWorkItemJson(companyOf(request), Number(request.params.workItemId));
  return view === undefined ? reply.code(404).send() : reply.type(JSON_TYPE).send(view);
});
app.get("/api/AuthorityRvdm/WorkItems", async (request, reply) => {
  const limit = Number(request.query.limit ?? 50);
  const cursor = request.query.cursor;
  const items = await store.listWorkItemsJson(companyOf(request), { limit: limit + 1, beforeWorkItemId: cursor === undefined ? undefined : decodeCursor(cursor) });
  return reply.type(JSON_TYPE).send(workItemPageText(items, limit));
});

const address = await app.listen({ port: Number(port), host: "127.0.0.1" });
process.stdout.write(`listening ${new URL(address).port}\n`);
process.on("SIGTERM", () => {
  void app
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
});
