// The PostgreSQL baseline the ≥3× claim is measured against: the conventional way to build
// intake, one transaction per request over a plain `pg` pool. No framework, no auth, no
// validation: only what every intake must do per item (find or open the company's batch under
// a lock, insert the item, count it, commit). Its tables are made by the real PostgreSQL
// migrations, in a schema of its own named by the connection string's search_path.
//   node bench/servers/pg-baseline.mjs <port> <databaseUrl> <poolSize> <batchMaxItems>
import { createServer } from "node:http";
import pg from "pg";

const [port, databaseUrl, poolSize = "10", batchMaxItems = "1000"] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(poolSize) });
const maxItems = Number(batchMaxItems);
const WORK_TYPE = "AuthorityRvdm";

async function addItem(companyId, body) {
  const client = await pool.connect();
  try {
    const now = new Date().toISOString();
    await client.query("BEGIN");
    // Serialises the company's adds so at most one Open batch ever exists.
    await client.query("SELECT pg_advisory_xact_lock($1)", [companyId]);
    let batch = (
      await client.query("SELECT work_batch_id, item_count FROM work_batches WHERE company_id = $1 AND work_type = $2 AND status = 'Open'", [companyId, WORK_TYPE])
    ).rows[0];
    if (batch && Number(batch.item_count) >= maxItems) {
      await client.query("UPDATE work_batches SET status = 'Closed', closed_at = $1 WHERE company_id = $2 AND work_batch_id = $3", [now, companyId, batch.work_batch_id]);
      batch = undefined;
    }
    if (!batch) {
      batch = (
        await client.query("INSERT INTO work_batches (company_id, work_type, status, created_at) VALUES ($1, $2, 'Open', $3) RETURNING work_batch_id, item_count", [companyId, WORK_TYPE, now])
      ).rows[0];
    }
    const item = (
      await client.query(
        `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url, request, created_at, updated_at)
         VALUES ($1, $2, $3, 'New', $4, $5, $6, $7, $8, $8) RETURNING work_item_id`,
        [companyId, batch.work_batch_id, WORK_TYPE, body.customerReference, body.documentReference ?? null, body.webhookUrl ?? null, JSON.stringify(body), now],
      )
    ).rows[0];
    await client.query("UPDATE work_batches SET item_count = item_count + 1 WHERE company_id = $1 AND work_batch_id = $2", [companyId, batch.work_batch_id]);
    await client.query("COMMIT");
    return { workBatchId: Number(batch.work_batch_id), workItemId: Number(item.work_item_id) };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      response.writeHead(400).end();
      return;
    }
    addItem(Number(request.headers["x-company-id"] ?? 1), body).then(
      (key) => response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(key)),
      (error) => {
        process.stderr.write(`baseline: ${error.message}\n`);
        response.writeHead(503).end();
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))));
