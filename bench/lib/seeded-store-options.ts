/**
 * The flags of the benches that measure reads on the seeded stores of bench/lib/operator-reads-seed.ts
 * (bench:operator-reads, bench:metrics-scrape): which stores, how many items, companies and New
 * items, how many samples, where PostgreSQL is, and whether to keep the data.
 */
import { benchFlags, wholeNumber } from "./args.ts";
import { PER_BATCH } from "./operator-reads-seed.ts";

export interface SeededStoreOptions {
  stores: Array<"sqlite" | "postgres">;
  items: number;
  companies: number;
  newItems: number;
  samples: number;
  postgresUrl: string;
  keep: boolean;
}

export const DEFAULT_POSTGRES_URL = "postgres://root@127.0.0.1:5432/test";

/** Parses `argv`; `newItems` is the bench's default for --new. Throws a message naming the flag. */
export function parseSeededStoreOptions(argv: string[], usage: string, defaults: { newItems: number }): SeededStoreOptions {
  const values = benchFlags(argv, usage, {
    store: { type: "string", default: "both" },
    items: { type: "string", default: "1000000" },
    companies: { type: "string", default: "1000" },
    new: { type: "string", default: String(defaults.newItems) },
    samples: { type: "string", default: "200" },
    "postgres-url": { type: "string", default: DEFAULT_POSTGRES_URL },
    keep: { type: "boolean", default: false },
  });
  const store = values.store;
  const stores: SeededStoreOptions["stores"] | undefined = store === "both" ? ["sqlite", "postgres"] : store === "sqlite" || store === "postgres" ? [store] : undefined;
  if (!stores) throw new Error(`--store: sqlite, postgres or both, got ${JSON.stringify(store)}`);
  const options: SeededStoreOptions = {
    stores,
    items: wholeNumber("items", values.items),
    companies: wholeNumber("companies", values.companies),
    newItems: wholeNumber("new", values.new),
    samples: wholeNumber("samples", values.samples),
    postgresUrl: values["postgres-url"],
    keep: values.keep,
  };
  if (options.items < 10 * PER_BATCH) throw new Error(`--items must be at least ${10 * PER_BATCH}`);
  if (options.newItems > options.items / 2) throw new Error("--new must be at most half of --items");
  return options;
}
