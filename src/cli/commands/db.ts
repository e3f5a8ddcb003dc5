import type { DistributionResult, PlacementStep } from "../../store/postgres/distribution.ts";
import { CommandFailedError, type Command } from "../command.ts";

const NOTHING_CHANGED = "Nothing was changed.";

const describe = (step: PlacementStep) => `${step.table.padEnd(26)} ${step.role.padEnd(11)} ${step.outcome}`;

export const dbDistribute: Command = {
  name: "db distribute",
  usage: "db distribute [--json]",
  summary: "on a Citus cluster: distribute tenant tables by company_id, make the others reference tables (once, after the first migration; safe to repeat)",
  options: {},
  async run({ config, flags }): Promise<DistributionResult> {
    if (config.store.kind !== "postgres") {
      throw new CommandFailedError(`DATABASE_URL names a SQLite file; distribution is for PostgreSQL with the Citus extension. ${NOTHING_CHANGED}`);
    }
    // Each table is reported as it is placed: on a big cluster a table takes a while.
    const progress = flags.json === true ? undefined : (step: PlacementStep) => process.stdout.write(`${describe(step)}\n`);
    // Imported here, not above: the PostgreSQL driver is no part of --help or of the other commands.
    const { distributeSchema, DistributionRefusedError } = await import("../../store/postgres/distribution.ts");
    let result: DistributionResult;
    try {
      result = await distributeSchema(config.store.url, progress);
    } catch (error) {
      if (error instanceof DistributionRefusedError) throw new CommandFailedError(error.message);
      throw error;
    }
    if (!result.citus) {
      throw new CommandFailedError(
        result.installable
          ? `this database has not created the citus extension (the server has it). On the coordinator, with shared_preload_libraries = 'citus', run CREATE EXTENSION citus; then this command again. ${NOTHING_CHANGED}`
          : `this PostgreSQL has no Citus extension, so there is nothing to distribute: one PostgreSQL needs no distribution step (docs/scaling.md). ${NOTHING_CHANGED}`,
      );
    }
    return result;
  },
  human: (result) => {
    const { tables, schema, citusVersion } = result as Extract<DistributionResult, { citus: true }>;
    const changed = tables.filter((step) => step.outcome === "distributed on company_id" || step.outcome === "made a reference table").length;
    return `Schema ${schema} on Citus ${citusVersion}: ${tables.length} tables in place, ${changed} of them placed now.`;
  },
};
