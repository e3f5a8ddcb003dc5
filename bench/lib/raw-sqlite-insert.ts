/**
 * The bulk bench's baseline (bench/bulk-add.ts), run as its own process so it can be pinned to
 * the server's core: plain better-sqlite3 inserting work items as fast as it can, 100 rows per
 * commit, on a database made by the service's own migrations (same tables, same indexes), in
 * WAL mode with synchronous=FULL like the service. No HTTP, no validation, no JSON parsing.
 *
 *   node --import tsx bench/lib/raw-sqlite-insert.ts <database file> <seconds> [rows per commit]
 *
 * Prints one JSON line: {rows, commits, seconds, rowsPerSecond}.
 */
import Database from "better-sqlite3";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.ts";
import { applyConnectionPragmas } from "../../src/store/sqlite/pragmas.ts";
import { PRELOAD_REQUEST } from "./stores.ts";

const [path, secondsText, perCommitText = "100"] = process.argv.slice(2);
if (!path || !secondsText) throw new Error("usage: raw-sqlite-insert.ts <database file> <seconds> [rows per commit]");
const seconds = Number(secondsText);
const perCommit = Number(perCommitText);

// The service's migrations make the schema; then the store steps aside.
const store = openSqliteStore(path);
await store.close();

const db = new Database(path);
applyConnectionPragmas(db);
const now = new Date().toISOString();
db.prepare("INSERT OR IGNORE INTO companies (company_id, name, created_at) VALUES (1, 'raw', ?)").run(now);
const batchId = Number(db.prepare("INSERT INTO work_batches (company_id, work_type, status, created_at) VALUES (1, 'AuthorityRvdm', 'Closed', ?)").run(now).lastInsertRowid);
// The intake writer's own statement (src/store/sqlite/intake-statements.ts).
const insert = db.prepare(
  `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url,
     request, deadline_at, created_at, updated_at)
   VALUES (?, ?, ?, 'New', ?, ?, ?, ?, ?, ?, ?)`,
);
const commit = db.transaction((from: number) => {
  const at = new Date().toISOString();
  for (let i = from; i < from + perCommit; i++) {
    insert.run(1, batchId, "AuthorityRvdm", `RAW-${i}`, "DOC-RAW", null, PRELOAD_REQUEST.replace('"HIST"', `"RAW-${i}"`), "2027-02-25T11:00:00.000Z", at, at);
  }
});

let rows = 0;
let commits = 0;
const started = performance.now();
const until = started + seconds * 1000;
while (performance.now() < until) {
  commit.immediate(rows);
  rows += perCommit;
  commits++;
}
const elapsed = (performance.now() - started) / 1000;
db.close();
process.stdout.write(`${JSON.stringify({ rows, commits, seconds: elapsed, rowsPerSecond: rows / elapsed })}\n`);
