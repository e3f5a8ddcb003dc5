// The bench's preload writes Successful items past the store, and no trigger counts them since
// migration 0016: it adds them to company_item_counts itself, in the transaction of each chunk.
import assert from "node:assert/strict";
import { test } from "node:test";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "../../bench/lib/stores.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { StoreLocation } from "../../src/config.ts";
import { availableBackends, POSTGRES_TEST_URL, queryRows } from "../helpers/backends.ts";

const COUNTS = "SELECT company_id, status, item_count FROM company_item_counts WHERE item_count <> 0 ORDER BY company_id, status";
const GROUPED = "SELECT company_id, status, COUNT(*) AS item_count FROM work_items WHERE status <> 'New' GROUP BY company_id, status ORDER BY company_id, status";

for (const backend of await availableBackends()) {
  test(`bench preload keeps company_item_counts equal to the items it wrote [${backend.name}]`, async () => {
    const bench: BenchStore = backend.name === "sqlite" ? sqliteBenchStore(false) : await postgresBenchStore(POSTGRES_TEST_URL, false, "wia_test_bench");
    try {
      const location: StoreLocation = bench.kind === "sqlite" ? { kind: "sqlite", path: bench.databaseUrl.slice("sqlite:".length) } : { kind: "postgres", url: bench.databaseUrl };
      const store = await openStore(location);
      try {
        for (const companyId of [3, 4]) await store.createCompany({ companyId, name: `Company ${companyId}` });
      } finally {
        await store.close();
      }
      // Three transactions of up to 100 batches of 7, companies taking turns: 703 and 700 items.
      await bench.preload(1_403, [3, 4], 7, () => undefined);
      const normalise = (rows: Array<Record<string, unknown>>) => rows.map((row) => `${row.company_id} ${row.status} ${row.item_count}`);
      const counts = normalise(await queryRows(location, COUNTS));
      assert.deepEqual(counts, ["3 Successful 703", "4 Successful 700"]);
      assert.deepEqual(counts, normalise(await queryRows(location, GROUPED)));
    } finally {
      await bench.cleanup();
    }
  });
}
