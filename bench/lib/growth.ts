/** The growth run of `npm run bench -- --growth`: the same routes on stores of three sizes, side by side. */
import { measure, type MeasureContext, type MeasureInput } from "./measure.ts";
import type { Check, Measurement } from "./model.ts";
import type { BenchOptions, RouteName } from "./options.ts";
import { ROUTE_METHOD, templatesFor } from "./routes.ts";
import { openSession, type Session } from "./session.ts";

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/**
 * Growth: three fresh stores and servers side by side, an empty one (just the seeded items), one
 * of 10,000 items and one of `growthItems`, preloaded with bulk SQL. Sizes are compared in
 * alternating slices (like a route and the ceiling), so drift in the machine's load falls on both
 * alike. Paging is measured before intake, since intake adds items.
 */
export async function runGrowth(
  options: BenchOptions,
  ctx: MeasureContext,
  serverCpus: string | undefined,
  record: (result: { route: Measurement; ceiling?: Measurement }) => void,
  checks: Check[],
  cleanups: Array<() => Promise<void>>,
): Promise<void> {
  const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M items` : `${(n / 1000).toLocaleString("en-US")}k items`);
  const sizes = [
    { name: "empty store", total: 0 },
    { name: label(10_000), total: 10_000 },
    { name: label(options.growthItems), total: options.growthItems },
  ];
  const sessions: Session[] = [];
  for (const size of sizes) {
    const session = await openSession(options, `growth_${size.total}`, serverCpus);
    sessions.push(session);
    cleanups.push(async () => {
      await session.server.stop();
      await session.store.cleanup();
    });
    if (size.total === 0) continue;
    log(`growth: preloading up to ${size.total.toLocaleString("en-US")} items with bulk SQL`);
    const started = Date.now();
    await session.store.preload(size.total, session.tenants.map((t) => t.companyId), 1000, (done) => {
      if (process.stderr.isTTY) process.stderr.write(`\r  preloaded ${done.toLocaleString("en-US")} items`);
    });
    if (process.stderr.isTTY) process.stderr.write("\n");
    const stored = await session.store.countItems();
    log(`growth: ${stored.toLocaleString("en-US")} items stored (preload took ${((Date.now() - started) / 1000).toFixed(0)} s)`);
    // Preloaded rows were never acknowledged over HTTP; the ledger counts them with the seeded ones.
    session.ledger.seeded += stored - session.ledger.answered;
  }
  const input = (route: RouteName, index: number): MeasureInput => ({
    name: route,
    target: "server",
    method: ROUTE_METHOD[route],
    phase: sizes[index]!.name,
    pid: sessions[index]!.server.pid,
    port: sessions[index]!.server.port,
    requests: templatesFor(route, sessions[index]!.tenants),
    countAnswers: route === "AddWorkItemCreate",
  });
  record(await measure(ctx, input("WorkItems", 1), input("WorkItems", 2)));
  const intake = await measure(ctx, input("AddWorkItemCreate", 0), input("AddWorkItemCreate", 2));
  sessions[0]!.ledger.record(intake.route, options.connections);
  sessions[2]!.ledger.record(intake.ceiling!, options.connections);
  record(intake);
  for (const [index, session] of sessions.entries()) {
    checks.push(session.ledger.check(`growth (${sizes[index]!.name}): every acknowledged item is stored`, await session.store.countItems()));
  }
}
