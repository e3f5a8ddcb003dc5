// The framework floor: Fastify 5 with none of our hooks, auth, rate limit, metrics or schemas,
// answering Ping with the same text (formatted once a second, as ours is) and WorkItem/{id} with the same statement the store runs
// (dist/'s own view column), on a read-only connection to the server's SQLite file. The company
// is read from the token without verifying it. No route of ours can be cheaper than this, so
// its share of the ceiling is the most a target on these routes can ask of a Fastify service.
//
// usage: node fastify-floor.mjs PORT SQLITE_PATH DIST_DIR
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import Fastify from "fastify";

const [port = "0", sqlitePath, distDir] = process.argv.slice(2);
if (!sqlitePath || !distDir) throw new Error("usage: node fastify-floor.mjs PORT SQLITE_PATH DIST_DIR");
const fromDist = (path) => import(pathToFileURL(join(distDir, path)).href);
const { workItemViewColumn } = await fromDist("store/core/item-json.js");
const { sqliteDialect } = await fromDist("store/sqlite/sqlite-port.js");
const { createPongText } = await fromDist("surfaces/shared/ping.js");
const pongText = createPongText(process.env.TZ ?? "UTC");

const db = new Database(sqlitePath, { readonly: true, fileMustExist: true });
const getView = db.prepare(`SELECT ${workItemViewColumn(sqliteDialect)} FROM work_items WHERE company_id = ? AND work_item_id = ?`).pluck();

function companyOf(authorization = "") {
  const payload = authorization.split(".")[1] ?? "";
  return Number(JSON.parse(Buffer.from(payload, "base64url").toString()).CompanyId);
}

const app = Fastify({ logger: false });
app.get("/api/AuthorityRvdm/Ping", (_request, reply) => {
  reply.type("text/plain; charset=utf-8").send(pongText());
});
app.get("/api/AuthorityRvdm/WorkItem/:workItemId", (request, reply) => {
  const view = getView.get(companyOf(request.headers.authorization), Number(request.params.workItemId));
  if (view === undefined) return reply.code(404).send();
  reply.type("application/json; charset=utf-8").send(view);
});

const address = await app.listen({ port: Number(port), host: "127.0.0.1" });
process.stdout.write(`listening ${new URL(address).port}\n`);
process.on("SIGTERM", () => {
  db.close();
  void app.close().then(() => process.exit(0));
});
