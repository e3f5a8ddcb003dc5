/**
 * The statements of what operators read across companies (SPEC §12.2, §16): the overview, the
 * activity, an item's timeline, the audit log, paused work types and the last bot pass. Written
 * once for both backends (see ../port.ts). The reads across companies still name company_id, as
 * sql.ts asks; the audit log, the pauses and the last pass are not tenant data.
 */
import { statement, type Statement } from "../port.ts";
import { HISTORY_COLUMNS } from "./sql-transition.ts";
import { ITEM_COLUMNS } from "./sql-work-items.ts";

export const OPERATOR_READS_SQL = {
  /** Across companies: an item by its id alone (ids are unique over all companies). */
  findWorkItem: statement("find_work_item", `SELECT ${ITEM_COLUMNS} FROM work_items WHERE work_item_id = $1`),
  itemHistory: statement(
    "item_history",
    `SELECT ${HISTORY_COLUMNS} FROM work_item_history WHERE company_id = $1 AND work_item_id = $2 ORDER BY entry_id`,
  ),
  itemWebhookAttempts: statement(
    "item_webhook_attempts",
    `SELECT o.company_id, o.delivery_id, o.event_type, o.url, a.attempt, a.at, a.status_code, a.error, a.duration_ms
       FROM webhook_outbox o JOIN webhook_delivery_attempts a ON a.company_id = o.company_id AND a.delivery_id = o.delivery_id
      WHERE o.company_id = $1 AND o.work_item_id = $2
      ORDER BY a.at, o.delivery_id, a.attempt`,
  ),
  /** Across companies: the audit log, newest first. */
  listAudit: statement(
    "list_audit",
    `SELECT audit_id, at, operator_id, operator_email, action, company_id, work_item_id, work_type, delivery_id, reason,
            sign_in_method, sign_in_issuer, sign_in_subject, items
       FROM audit_log WHERE audit_id < $1 ORDER BY audit_id DESC LIMIT $2`,
  ),
  pausedWorkTypes: statement("paused_work_types", "SELECT work_type FROM bot_pauses ORDER BY work_type"),
  recordBotPass: statement(
    "record_bot_pass",
    `INSERT INTO bot_last_pass (singleton, started_at, finished_at, submitted, succeeded, failed, retried) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (singleton) DO UPDATE SET started_at = excluded.started_at, finished_at = excluded.finished_at, submitted = excluded.submitted,
       succeeded = excluded.succeeded, failed = excluded.failed, retried = excluded.retried`,
  ),
  lastBotPass: statement("last_bot_pass", "SELECT started_at, finished_at, submitted, succeeded, failed, retried FROM bot_last_pass"),

  /** Across companies, the overview: every company. */
  overviewCompanies: statement("overview_companies", "SELECT company_id, name FROM companies ORDER BY company_id", { table: "companies", orderBy: ["company_id"] }),
  /** Across companies, the overview: the counters the work_items triggers keep (migration 0009), New items left out. */
  overviewCounts: statement("overview_counts", "SELECT company_id, status, item_count FROM company_item_counts WHERE item_count <> 0", {
    table: "company_item_counts",
    orderBy: [],
  }),
  /** Across companies, the overview: items in Open batches, through the batch status index. */
  overviewOpenBatchItems: statement(
    "overview_open_batch_items",
    "SELECT company_id, SUM(item_count) AS items FROM work_batches WHERE status = 'Open' GROUP BY company_id",
    { table: "work_batches", orderBy: [] },
  ),
  /**
   * Across companies, the overview: the New items and the oldest of them, found through the
   * batches that can hold one. The counters leave New items out, so that intake, which inserts
   * every item as New, pays no counter upsert (migration 0009).
   */
  overviewNewItems: statement(
    "overview_new_items",
    `SELECT i.company_id, COUNT(*) AS new_items, MIN(i.created_at) AS oldest FROM work_batches b
       JOIN work_items i ON i.company_id = b.company_id AND i.work_batch_id = b.work_batch_id
      WHERE b.status IN ('Open', 'Closed', 'Processing') AND i.status = 'New'
      GROUP BY i.company_id`,
    { table: "work_batches", colocated: ["work_items"], orderBy: [] },
  ),
  /**
   * Across companies, the overview: the items being filed (InProgress), not counted either: a
   * claim taken over by another worker stays InProgress, and the claim does not know it was. They
   * are as many as the calls in flight, found through a status index. Those indexes leave New
   * items out (WHERE status <> 'New'), and SQLite uses a partial index only for a query that
   * repeats its condition: without it, it walked all of work_items (460 ms at 1M items).
   */
  overviewInProgressItems: statement(
    "overview_in_progress_items",
    "SELECT company_id, COUNT(*) AS items FROM work_items WHERE status = 'InProgress' AND status <> 'New' GROUP BY company_id",
    { table: "work_items", orderBy: [] },
  ),
  /**
   * Across companies, the overview: failures since $1, read from the partial index of failed
   * items (completed_at, company_id) and grouped afterwards. MATERIALIZED keeps the GROUP BY out
   * of the scan: given the grouping, SQLite (without ANALYZE statistics) walked every item in
   * company order instead: 1.3 s at 1M items, against 3 ms (docs/performance.md, Operations).
   */
  overviewRecentFailures: statement(
    "overview_recent_failures",
    `WITH failed AS MATERIALIZED (SELECT company_id FROM work_items WHERE status = 'Failed' AND completed_at >= $1)
     SELECT company_id, COUNT(*) AS failed FROM failed GROUP BY company_id`,
    { table: "work_items", orderBy: [] },
  ),
  /**
   * Across companies, the overview's deadlines (SPEC §14): the New items past their deadline
   * ($1 is now; deadline_at NULL), then the next $2 deadlines with the New items due at each and
   * their companies, from the partial index of New items by deadline alone (migration 0011).
   * Node by node (a lost Citus node) each shard group answers for its own companies: the caller
   * adds up the rows of one deadline (a company is on one shard group only) and takes the first $2.
   */
  overviewDeadlines: statement(
    "overview_deadlines",
    `SELECT NULL AS deadline_at, COUNT(*) AS unsubmitted, COUNT(DISTINCT company_id) AS company_count
       FROM work_items WHERE status = 'New' AND deadline_at < $1
     UNION ALL
     SELECT * FROM (SELECT deadline_at, COUNT(*) AS unsubmitted, COUNT(DISTINCT company_id) AS company_count
                      FROM work_items WHERE status = 'New' AND deadline_at >= $1
                     GROUP BY deadline_at ORDER BY deadline_at LIMIT $2) next_deadlines`,
    { table: "work_items", orderBy: [] },
  ),
  /**
   * Across companies, the overview: items filed with the authority since $1, per company, read
   * from the partial index of filed items (migration 0011), which intake's New items stay out of.
   */
  overviewSubmittedSince: statement(
    "overview_submitted_since",
    `WITH filed AS MATERIALIZED (SELECT company_id FROM work_items WHERE submitted_at >= $1)
     SELECT company_id, COUNT(*) AS submitted FROM filed GROUP BY company_id`,
    { table: "work_items", orderBy: [] },
  ),

  /** Across companies, the overview: New items past their deadline ($1 is now), from the index of New items by deadline (migration 0011). */
  overviewOverdue: statement(
    "overview_overdue",
    `WITH overdue AS MATERIALIZED (SELECT company_id FROM work_items WHERE status = 'New' AND deadline_at < $1)
     SELECT company_id, COUNT(*) AS overdue FROM overdue GROUP BY company_id`,
    { table: "work_items", orderBy: [] },
  ),
  /** Across companies, the overview's activity since $1 (SPEC §16), in all. */
  activitySince: activityStatement("activity_since", false),
  /** The same per hour, for the Throughput chart. */
  hourlyActivity: activityStatement("hourly_activity", true),
} as const;


/**
 * Across companies: items filed, succeeded and failed, and webhook deliveries given up, since
 * $1, each from a partial index by its time (filed and failed items: migrations 0011 and 0009;
 * succeeded items: 0015; ended deliveries: 0007; failed delivery attempts: 0022), per company (and per hour, whole hours since
 * 1970, when `perHour`), added up by the caller: grouped by the distribution column, as every
 * overview count is, so each shard answers for its own companies.
 */
function activityStatement(name: string, perHour: boolean): Statement {
  const measures = [
    ["submitted", "submitted_at", "work_items", "submitted_at >= $1"],
    ["succeeded", "completed_at", "work_items", "status = 'Successful' AND completed_at >= $1"],
    ["failed", "completed_at", "work_items", "status = 'Failed' AND completed_at >= $1"],
    ["deliveriesFailed", "ended_at", "webhook_outbox", "status = 'Failed' AND ended_at >= $1"],
    ["deliveryAttemptsFailed", "at", "webhook_delivery_attempts", "(status_code IS NULL OR status_code NOT BETWEEN 200 AND 299) AND at >= $1"],
  ] as const;
  // MATERIALIZED keeps each GROUP BY out of its range scan, as in overview_recent_failures:
  // given the grouping by company, SQLite walks every row in company order instead.
  return statement(name, (d) => {
    const ranges = measures.map(
      ([measure, at, table, condition]) => `${measure} AS MATERIALIZED (SELECT company_id, ${perHour ? d.epochHour(at) : "0"} AS hour FROM ${table} WHERE ${condition})`,
    );
    const counts = measures.map(([measure]) => `SELECT '${measure}' AS measure, hour, company_id, COUNT(*) AS items FROM ${measure} GROUP BY hour, company_id`);
    return `WITH ${ranges.join(",\n     ")}\n${counts.join("\n UNION ALL ")}`;
  }, { table: "work_items", colocated: ["webhook_outbox", "webhook_delivery_attempts"], orderBy: [] });
}
