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
import { companiesCreate, companiesErase, companiesRename } from "./commands/companies.ts";
import { companiesExport } from "./commands/export.ts";
import { dbBackup, dbDistribute, dbMigrate, dbRestore, dbStatus, dbVacuum } from "./commands/db.ts";
import { keysCreate, keysList, keysRevoke } from "./commands/keys.ts";
import { operatorCommands } from "./commands/operators.ts";
import { webhooksSecret } from "./commands/webhooks.ts";

/** As the README says to call it: `-s` keeps npm's banner off stdout, so `--json` prints one document. */
const HOW_TO_CALL = "npm run -s cli --";

export const commands: Command[] = [companiesCreate, companiesRename, companiesExport, companiesErase, keysCreate, keysList, keysRevoke, webhooksSecret, botRunOnce, ...operatorCommands, dbStatus, dbMigrate, dbBackup, dbRestore, dbVacuum, dbDistribute];

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

/** A machine-readable name for each way a call can fail; with --json it is the error document's `code`. */
type FailureCode = "USAGE" | "UNKNOWN_COMMAND" | "CONFIGURATION" | "FAILED" | "SCHEMA_BEHIND" | "STORE_UNAVAILABLE" | "ERROR";

/**
 * How a call ends. With --json, every outcome is exactly one JSON document on stdout: the
 * result, or `{"error": {"code", "message"}}` with a non-zero exit. Failures are also told to a
 * person on stderr, usage errors with the command's usage.
 */
class Outcome {
  constructor(private readonly json: boolean) {}

  done(document: unknown, text: string): number {
    process.stdout.write(this.json ? `${JSON.stringify(document)}\n` : `${text}\n`);
    return 0;
  }

  /** With --json the error document goes to stdout, for the script; the line for a person goes to stderr either way. */
  failed(code: FailureCode, message: string, exit: 1 | 2, text = message): number {
    if (this.json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    process.stderr.write(`${text}\n`);
    return exit;
  }
}

export async function runCli(argv: string[]): Promise<number> {
  const outcome = new Outcome(argv.includes("--json"));
  try {
    return await run(argv, outcome);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const name = error instanceof Error ? error.name : "";
    const code: FailureCode = name === "SchemaBehindError" ? "SCHEMA_BEHIND" : name === "StoreUnavailableError" ? "STORE_UNAVAILABLE" : "ERROR";
    return outcome.failed(code, message, 1, `error: ${message}`);
  }
}

async function run(argv: string[], outcome: Outcome): Promise<number> {
  const words = argv.filter((a) => !a.startsWith("-")).slice(0, 2).join(" ");
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    const document = { usage: `${HOW_TO_CALL} <command> [flags]`, commands: commands.map(({ name, usage: line, summary }) => ({ name, usage: line, summary })) };
    const shown = outcome.done(document, usage());
    // Called with nothing at all, the usage is the answer, but the call did nothing: exit 2.
    return argv.length === 0 ? 2 : shown;
  }
  const command = commands.find((c) => c.name === words);
  if (!command) return outcome.failed("UNKNOWN_COMMAND", `unknown command: ${JSON.stringify(words)}`, 2, `unknown command: ${JSON.stringify(words)}\n\n${usage()}`);
  const usageError = (message: string) => outcome.failed("USAGE", message, 2, `${message}\n\nusage: ${HOW_TO_CALL} ${command.usage}`);
  let flags;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: argv, options: { ...command.options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
    positionals = parsed.positionals.slice(2);
    const extra = positionals[command.positionals ?? 0];
    if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
    flags = parsed.values;
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  const { ConfigError, loadConfig } = await import("../config.ts");
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) return outcome.failed("CONFIGURATION", error.message, 1, `configuration error: ${error.message}`);
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
    if (command.streams) {
      process.stderr.write(`${command.human(result)}\n`);
      return 0;
    }
    return outcome.done(result, command.human(result));
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message);
    if (error instanceof CommandFailedError) return outcome.failed("FAILED", error.message, 1, `${command.name}: ${error.message}`);
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
