/** The flags of a standalone bench (bench:bot-pass, bench:bot-filing, bench:events): node's parseArgs, strict, and --help. */
import { parseArgs, type ParseArgsConfig } from "node:util";

type Flags = NonNullable<ParseArgsConfig["options"]>;

/** Parses `argv` against `options` plus `--help`, which prints `usage` and exits. */
export function benchFlags<T extends Flags>(argv: string[], usage: string, options: T) {
  const { values } = parseArgs({ args: argv, strict: true, options: { ...options, help: { type: "boolean", default: false } } as T & { help: { type: "boolean"; default: false } } });
  if ((values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return values;
}

/** A flag's value as a whole number of at least `min`, or an error naming the flag. */
export function wholeNumber(name: string, text: string, min = 1): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number of at least ${min}, got ${JSON.stringify(text)}`);
  return value;
}
