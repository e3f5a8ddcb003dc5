/** Polling for conditions that real processes reach in their own time, always bounded. */
import { setTimeout as sleep } from "node:timers/promises";

/**
 * How long a test waits for a process or a condition before it calls that a hang, and the
 * timeout of suites that start processes. It is no speed expectation: on a loaded machine a
 * CLI call took 25 s where it takes 1 s on a quiet one, and the tests must pass there too, only
 * later. A working run never comes near it; a hung one fails after it instead of never ending.
 */
export const HANG_TIMEOUT_MS = 20 * 60_000;

export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = HANG_TIMEOUT_MS, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
