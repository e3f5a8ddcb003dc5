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

export interface Command {
  /** e.g. "keys create" */
  name: string;
  usage: string;
  summary: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  /** How the store is opened for it; default as MIGRATE_ON_START says ("apply", or "require"). */
  migrations?: MigrationMode;
  run(context: { store: Store; config: Config; flags: Flags }): Promise<unknown>;
  /** Text for a person; --json prints the run's result instead. */
  human(result: unknown): string;
}

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
