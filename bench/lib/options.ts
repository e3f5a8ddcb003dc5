/** Command-line flags of `npm run bench`. */
import { parseArgs } from "node:util";

export const ROUTE_NAMES = ["Authenticate", "Ping", "AddWorkItemCreate", "WorkItem", "WorkItems"] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

export interface BenchOptions {
  store: "sqlite" | "postgres";
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  routes: RouteName[];
  companies: number;
  loader: "auto" | "wrk" | "autocannon";
  /** Also measure one-transaction-per-request over a plain pg pool (postgres only). */
  baselinePg: boolean;
  /** Preload 10,000 and 1,000,000 items and compare intake and paging against the empty store. */
  growth: boolean;
  growthItems: number;
  /** Run each route in its own server process under node --cpu-prof. */
  profile: boolean;
  postgresUrl: string;
  keep: boolean;
  tag: string | undefined;
  /** A git revision whose server is measured beside this one's, in alternating rounds. */
  against: string | undefined;
  /** Measure this build beside itself with every request traced and exported over OTLP (SPEC §17). */
  traced: boolean;
  /** With `against`: how many alternating rounds per route. */
  rounds: number;
  /** Also measure bare Fastify answering Ping, WorkItem/{id} and WorkItems through the store (SQLite only): the framework's floor. */
  floor: boolean;
}

export const USAGE = `usage: npm run bench -- [flags]
  --store sqlite|postgres   store of the server under test (default sqlite)
  --duration N              seconds each route is driven (default 10)
  --warmup N                seconds of warm-up before each route (default 3)
  --connections N           concurrent connections (default 50)
  --routes A,B              subset of ${ROUTE_NAMES.join(",")} (default all)
  --loader auto|wrk|autocannon  load generator (default: wrk when installed)
  --baseline-pg             with postgres: also measure a plain pg pool, one transaction per request
                            (on by default with --store postgres; --no-baseline-pg turns it off)
  --growth                  preload 10,000 and 1,000,000 items; compare with the empty store
  --growth-items N          the large preload (default 1000000)
  --profile                 run each route in its own server under node --cpu-prof
  --postgres-url URL        server for --store postgres (default postgres://root@127.0.0.1:5432/test)
  --keep                    keep the temp data folder / PostgreSQL schema afterwards
  --tag NAME                added to the result file names
  --against REV             also build REV's src/ with this harness and measure its server beside this
                            one, route by route in alternating rounds; reports this / REV per route
  --traced                  also measure this build with tracing on, every request sampled and exported to a
                            local OTLP sink, beside itself untraced, in alternating rounds; reports traced / untraced
  --rounds N                with --against or --traced: alternating rounds per route (default 2)
  --floor                   also measure bare Fastify answering Ping, WorkItem/{id} and WorkItems through
                            the store, with no hooks, auth or schemas (SQLite only): the most a route can reach`;

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${JSON.stringify(text)}`);
  return value;
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      store: { type: "string", default: "sqlite" },
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      routes: { type: "string" },
      companies: { type: "string" },
      loader: { type: "string", default: "auto" },
      "baseline-pg": { type: "boolean" },
      "no-baseline-pg": { type: "boolean" },
      growth: { type: "boolean", default: false },
      "growth-items": { type: "string" },
      profile: { type: "boolean", default: false },
      "postgres-url": { type: "string", default: "postgres://root@127.0.0.1:5432/test" },
      keep: { type: "boolean", default: false },
      tag: { type: "string" },
      against: { type: "string" },
      traced: { type: "boolean", default: false },
      rounds: { type: "string" },
      floor: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.store !== "sqlite" && values.store !== "postgres") throw new Error(`--store must be sqlite or postgres, got ${JSON.stringify(values.store)}`);
  if (!["auto", "wrk", "autocannon"].includes(values.loader)) throw new Error(`--loader must be auto, wrk or autocannon`);
  const routes = (values.routes ?? ROUTE_NAMES.join(","))
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => {
      const route = ROUTE_NAMES.find((known) => known.toLowerCase() === name.toLowerCase());
      if (!route) throw new Error(`unknown route ${JSON.stringify(name)}; known: ${ROUTE_NAMES.join(", ")}`);
      return route;
    });
  if (values.tag !== undefined && !/^[A-Za-z0-9._-]{1,40}$/.test(values.tag)) throw new Error("--tag may hold letters, digits, . _ - only");
  if (values.against !== undefined && !/^[A-Za-z0-9._/^~-]{1,80}$/.test(values.against)) throw new Error("--against takes a git revision (a commit, branch or tag)");
  if (values.floor && values.store !== "sqlite") throw new Error("--floor reads the SQLite file: use it with --store sqlite");
  if (values.against !== undefined && (values.profile || values.growth)) throw new Error("--against measures the routes only: leave out --profile and --growth");
  if (values.traced && (values.against !== undefined || values.profile || values.growth)) throw new Error("--traced compares this build with itself: leave out --against, --profile and --growth");
  return {
    store: values.store,
    durationSeconds: positive("duration", values.duration, 10),
    warmupSeconds: values.warmup === "0" ? 0 : positive("warmup", values.warmup, 3),
    connections: Math.round(positive("connections", values.connections, 50)),
    routes,
    companies: Math.round(positive("companies", values.companies, 10)),
    loader: values.loader as BenchOptions["loader"],
    baselinePg: values.store === "postgres" && !values["no-baseline-pg"] ? true : Boolean(values["baseline-pg"]),
    growth: values.growth,
    growthItems: Math.round(positive("growth-items", values["growth-items"], 1_000_000)),
    profile: values.profile,
    postgresUrl: values["postgres-url"],
    keep: values.keep,
    tag: values.tag,
    against: values.against,
    traced: values.traced,
    rounds: Math.round(positive("rounds", values.rounds, 2)),
    floor: values.floor,
  };
}
