/** The shape of one CLI command: its flags, what it does, and how it reads to a person. */
import type { ParseArgsConfig } from "node:util";
import type { Config } from "../config.ts";
import type { MigrationMode, Store } from "../store/store.ts";

export type Flags = Record<string, string | boolean | undefined>;

export class UsageError extends Error {
  override name = "UsageError";
}
/** A command that ran but could not do its job (unknown id, duplicate): exit code 1. */
export class CommandFailedError extends Error {
  override name = "CommandFailedError";
}

interface CommandBase {
  /** e.g. "keys create" */
  name: string;
  usage: string;
  summary: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  /** How many arguments it takes after its name (`db backup FILE`: 1); default none. */
  positionals?: number;
  /** Text for a person; --json prints the run's result instead. */
  human(result: unknown): string;
  /**
   * It writes its own output to stdout as it goes (`companies export`'s JSON Lines); its result is
   * then told on stderr, as `human` says it, and with --json too.
   */
  streams?: true;
}

/** A command over the store's services. */
export interface StoreCommand extends CommandBase {
  opensStore?: true;
  /** How the store is opened for it; default as MIGRATE_ON_START says ("apply", or "require"). */
  migrations?: MigrationMode;
  run(context: { store: Store; config: Config; flags: Flags; positionals: string[] }): Promise<unknown>;
}

/** A command on the database file itself (`db backup`), which must not open it as a store first. */
export interface FileCommand extends CommandBase {
  opensStore: false;
  run(context: { config: Config; flags: Flags; positionals: string[] }): Promise<unknown>;
}

export type Command = StoreCommand | FileCommand;

export function requiredInteger(flags: Flags, name: string): number {
  const value = flags[name];
  if (typeof value !== "string") throw new UsageError(`--${name} is required`);
  if (!/^[1-9][0-9]{0,14}$/.test(value)) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function requiredText(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}
