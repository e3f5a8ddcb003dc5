/**
 * The admin CLI: `npm run -s cli -- <command> [flags]`. A thin layer over the services of
 * src/admin, src/webhooks and src/bot; `--json` prints exactly one JSON document on stdout.
 * Exit codes: 0 done, 1 failed, 2 usage.
 *
 * Start-up is most of a call's time, so a call loads only what it uses: the configuration and
 * the store (TypeBox, the holiday calendars, a database driver: most of the module graph) are
 * imported once a command and its flags are known, and a command file imports heavy services
 * inside its run(). `--help` and a usage error load neither.
 */
import { parseArgs } from "node:util";
import type { Store } from "../store/store.ts";
import { CommandFailedError, UsageError, type Command } from "./command.ts";
import { botRunOnce } from "./commands/bot.ts";
import { companiesCreate } from "./commands/companies.ts";
import { dbBackup, dbDistribute, dbMigrate, dbStatus } from "./commands/db.ts";
import { keysCreate, keysList, keysRevoke } from "./commands/keys.ts";
import { operatorCommands } from "./commands/operators.ts";
import { webhooksSecret } from "./commands/webhooks.ts";

/** As the README says to call it: `-s` keeps npm's banner off stdout, so `--json` prints one document. */
const HOW_TO_CALL = "npm run -s cli --";

export const commands: Command[] = [companiesCreate, keysCreate, keysList, keysRevoke, webhooksSecret, botRunOnce, ...operatorCommands, dbStatus, dbMigrate, dbBackup, dbDistribute];

function usage(): string {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return [
    `usage: ${HOW_TO_CALL} <command> [flags]`,
    "",
    ...commands.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`),
    "",
    "Every command accepts --json. Storage comes from DATABASE_URL (default sqlite:./data/work-item-api.db).",
  ].join("\n");
}

export async function runCli(argv: string[]): Promise<number> {
  const words = argv.filter((a) => !a.startsWith("-")).slice(0, 2).join(" ");
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${usage()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const command = commands.find((c) => c.name === words);
  if (!command) {
    process.stderr.write(`unknown command: ${JSON.stringify(words)}\n\n${usage()}\n`);
    return 2;
  }
  let flags;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: argv, options: { ...command.options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
    positionals = parsed.positionals.slice(2);
    const extra = positionals[command.positionals ?? 0];
    if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
    flags = parsed.values;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\nusage: ${HOW_TO_CALL} ${command.usage}\n`);
    return 2;
  }
  const { ConfigError, loadConfig } = await import("../config.ts");
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  let store: Store | undefined;
  try {
    let result: unknown;
    if (command.opensStore === false) result = await command.run({ config, flags, positionals });
    else {
      const { openStore } = await import("../store/open-store.ts");
      store = await openStore(config.store, { migrations: command.migrations ?? (config.migrateOnStart ? "apply" : "require") });
      result = await command.run({ store, config, flags, positionals });
    }
    process.stdout.write(flags.json ? `${JSON.stringify(result)}\n` : `${command.human(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\nusage: ${HOW_TO_CALL} ${command.usage}\n`);
      return 2;
    }
    if (error instanceof CommandFailedError) {
      process.stderr.write(`${command.name}: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store?.close();
  }
}

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
