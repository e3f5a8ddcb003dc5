/**
 * addWorkItem on PostgreSQL: group commit. Calls that arrive together form a group (at most
 * 64, see below) that is sent as ONE statement, `wia_add_work_items` (migrations/0001), which
 * PostgreSQL runs as one transaction with a subtransaction (savepoint) per item. So a group
 * costs one round trip and one WAL flush, one item's failure fails only its own call, and a
 * failed commit fails every call of the group. Up to four groups run at once on different
 * connections; a company always uses the same channel (see group-commit.ts).
 *
 * addWorkItems (a bulk add) takes the same channel as its company's single adds, as a group of its
 * own: ONE statement, `wia_add_work_item_bulk` (migrations/0008), one transaction for all its
 * items.
 *
 * On Citus, a company whose node does not answer (SPEC §23) is refused at once for a moment
 * (LOST_COMPANY_MS) after one of its adds failed for that: its calls would otherwise go on
 * joining the groups of its channel, and the companies that share the channel would wait behind
 * each failing item.
 */
import { decodeBulkAnswer } from "../core/bulk-answer.ts";
import { StoreUnavailableError } from "../errors.ts";
import type { AddWorkItemOutcome, AddWorkItemsOutcome, NewWorkItem, NewWorkItems } from "../store.ts";
import type { DatabasePort } from "../port.ts";
import { isRetryableSqlState } from "./errors.ts";
import { GroupCommitter, type GroupResult } from "./group-commit.ts";
import { isLostNode } from "./shard-fan-out.ts";
import { POSTGRES_SQL } from "./statements.ts";

/**
 * Items per group. Each is a subtransaction; PostgreSQL caches 64 of them per transaction in
 * shared memory, beyond which every other session's snapshots get slower.
 */
const MAX_GROUP_SIZE = 64;

/** How long a company's adds are refused without a try after one failed for a lost node. */
const LOST_COMPANY_MS = 2_000;

interface AddRow {
  /** Index into the sorted group. */
  item_ord: number;
  outcome: "created" | "replayed" | "keyReused" | "failed";
  batch_id: string | null;
  item_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
}

/** The intake of one process: single adds grouped, each bulk add a group of its own, per company channel. */
export interface Appender {
  add(input: NewWorkItem): Promise<AddWorkItemOutcome>;
  addMany(input: NewWorkItems): Promise<AddWorkItemsOutcome>;
  /** Resolves once every call made so far has settled. */
  drain(): Promise<void>;
}

type Call = { kind: "one"; input: NewWorkItem } | { kind: "many"; input: NewWorkItems };
type Answer = { kind: "one"; outcome: AddWorkItemOutcome } | { kind: "many"; outcome: AddWorkItemsOutcome };

export function createAppender(db: DatabasePort, channels: number): Appender {
  const lostUntil = new Map<number, number>();
  /** Runs `call` for the company, unless its node was lost a moment ago. */
  const unlessLost = async <T>(companyId: number, call: () => Promise<T>): Promise<T> => {
    const until = lostUntil.get(companyId);
    if (until !== undefined && Date.now() < until) throw new StoreUnavailableError("the store's node for this company does not answer");
    lostUntil.delete(companyId);
    try {
      return await call();
    } catch (error) {
      if (error instanceof StoreUnavailableError && isLostNode(error.cause)) lostUntil.set(companyId, Date.now() + LOST_COMPANY_MS);
      throw error;
    }
  };
  const committer = new GroupCommitter<Call, Answer>({
    channels,
    maxGroupSize: MAX_GROUP_SIZE,
    channelKey: (call) => call.input.companyId,
    alone: (call) => call.kind === "many",
    runGroup: async (calls) => {
      const [first] = calls;
      if (first?.kind === "many") return [{ outcome: { kind: "many", outcome: await appendBulk(db, first.input) } }];
      const singles = calls.flatMap((call) => (call.kind === "one" ? [call.input] : []));
      return (await appendGroup(db, singles)).map((result) => ("outcome" in result ? { outcome: { kind: "one", outcome: result.outcome } } : result));
    },
  });
  return {
    async add(input) {
      const answer = await unlessLost(input.companyId, () => committer.submit({ kind: "one", input }));
      if (answer.kind !== "one") throw new Error("group commit answered a single add with a bulk outcome");
      return answer.outcome;
    },
    async addMany(input) {
      const answer = await unlessLost(input.companyId, () => committer.submit({ kind: "many", input }));
      if (answer.kind !== "many") throw new Error("group commit answered a bulk add with a single outcome");
      return answer.outcome;
    },
    drain: () => committer.drain(),
  };
}

async function appendBulk(db: DatabasePort, input: NewWorkItems): Promise<AddWorkItemsOutcome> {
  const { items, idempotency } = input;
  let row: { outcome: "created" | "replayed" | "keyReused"; answer: unknown } | undefined;
  try {
    row = await db.one(POSTGRES_SQL.addWorkItemBulk, [
      input.companyId,
      input.workType,
      input.batchMaxItems,
      items.map((item) => item.customerReference),
      items.map((item) => item.documentReference),
      items.map((item) => item.webhookUrl),
      items.map((item) => JSON.stringify(item.request)),
      items.map((item) => item.deadlineAt ?? null),
      idempotency?.key ?? null,
      idempotency?.requestHash ?? null,
      idempotency?.retentionSeconds ?? null,
      JSON.stringify(idempotency?.refused ?? []),
      items[0]?.traceParent ?? null,
    ]);
  } catch (error) {
    // As for a group of single adds: a broken connection leaves the commit unknown.
    throw error instanceof StoreUnavailableError ? new StoreUnavailableError("PostgreSQL did not confirm the commit", { cause: error }) : error;
  }
  if (!row) throw new Error("wia_add_work_item_bulk returned no row");
  if (row.outcome === "keyReused") return { kind: "keyReused" };
  const answer = decodeBulkAnswer(row.answer);
  return row.outcome === "replayed" ? { kind: "replayed", ...answer } : { kind: "created", keys: answer.keys };
}

async function appendGroup(db: DatabasePort, inputs: NewWorkItem[]): Promise<Array<GroupResult<AddWorkItemOutcome>>> {
  // One lock order for every group (company, then work type), so concurrent groups never deadlock.
  const order = inputs
    .map((input, ord) => ({ input, ord }))
    .sort((a, b) => a.input.companyId - b.input.companyId || (a.input.workType < b.input.workType ? -1 : a.input.workType > b.input.workType ? 1 : 0));
  const items = order.map(({ input }) => ({
    company_id: input.companyId,
    work_type: input.workType,
    customer_reference: input.customerReference,
    document_reference: input.documentReference,
    webhook_url: input.webhookUrl,
    batch_max_items: input.batchMaxItems,
    idempotency_key: input.idempotency?.key ?? null,
    request_hash: input.idempotency?.requestHash ?? null,
    retention_seconds: input.idempotency?.retentionSeconds ?? null,
    deadline_at: input.deadlineAt ?? null,
    trace_parent: input.traceParent ?? null,
  }));
  const requests = order.map(({ input }) => JSON.stringify(input.request));
  let rows: AddRow[];
  try {
    // `pg` settles a query at ReadyForQuery, which the server sends after the statement's
    // implicit COMMIT has reached the WAL: a resolved promise means committed.
    rows = await db.all<AddRow>(POSTGRES_SQL.addWorkItems, [JSON.stringify(items), requests]);
  } catch (error) {
    // Whether the server committed is unknown when the connection broke after sending: the
    // callers are told "unavailable, retry", and an Idempotency-Key makes that retry safe.
    throw error instanceof StoreUnavailableError ? new StoreUnavailableError("PostgreSQL did not confirm the commit", { cause: error }) : error;
  }
  const results: Array<GroupResult<AddWorkItemOutcome>> = [];
  for (const row of rows) results[order[row.item_ord]!.ord] = toResult(row);
  return results;
}

function toResult(row: AddRow): GroupResult<AddWorkItemOutcome> {
  switch (row.outcome) {
    case "created":
    case "replayed":
      // A key with the same hash that names no item is a bulk add's (its answer is not one item).
      if (row.item_id === null) return { outcome: { kind: "keyReused" } };
      return { outcome: { kind: row.outcome, key: { workBatchId: Number(row.batch_id), workItemId: Number(row.item_id) } } };
    case "keyReused":
      return { outcome: { kind: "keyReused" } };
    default: {
      const cause = Object.assign(new Error(row.failure_message ?? "work item not stored"), { code: row.failure_code });
      // A deadlock or lock timeout on this item is worth a retry; anything else is a bug or bad data.
      if (isRetryableSqlState(row.failure_code)) return { error: new StoreUnavailableError("PostgreSQL could not store the item now", { cause }) };
      return { error: new Error(`PostgreSQL refused the work item (SQLSTATE ${row.failure_code})`, { cause }) };
    }
  }
}
