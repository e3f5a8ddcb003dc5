/**
 * The item sweep of `npm run bench:erasure`, in a process of its own as the worker role runs it
 * (so its synchronous SQLite work never stalls the bench's clients): passes of the worker's
 * bounds (5,000 items a pass, 50 a transaction, each followed by its hand-back of free pages)
 * back to back, over the store DATABASE_URL names, until a pass finds nothing past
 * `--retention-days`. Progress on stderr; `{items, ms, passes}` on stdout.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config.ts";
import { sweepExpiredItems } from "../../src/retention/item-sweep.ts";
import { openStore } from "../../src/store/open-store.ts";

/** The worker role's bound per pass (src/worker-role.ts, ITEM_SWEEP_ROWS). */
const ITEMS_PER_PASS = 5000;

const { values } = parseArgs({ options: { "retention-days": { type: "string" } }, strict: true });
const retentionDays = Number(values["retention-days"]);
if (!(retentionDays > 0)) throw new Error(`--retention-days must be a positive number, got ${JSON.stringify(values["retention-days"])}`);

const store = await openStore(loadConfig().store);
try {
  const started = performance.now();
  let items = 0;
  let passes = 0;
  for (;;) {
    const erased = await sweepExpiredItems(store, { now: new Date(), retentionDays, maxRows: ITEMS_PER_PASS });
    if (erased === 0) break;
    items += erased;
    passes += 1;
    if (passes % 10 === 0) process.stderr.write(`sweep: ${items.toLocaleString("en")} items erased\n`);
  }
  process.stdout.write(`${JSON.stringify({ items, ms: performance.now() - started, passes })}\n`);
} finally {
  await store.close();
}
