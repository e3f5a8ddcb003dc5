/**
 * Whether dist/ is a build of the sources as they are now, so a process may start from it
 * instead of the sources under tsx (bin/cli.mjs; the tests' child processes, scripts/lib/processes.ts).
 *
 * The build is current while nothing under src/ (a file, or a folder, which changes when a file
 * is added or removed) is newer than the built entry: after an edit or a checkout the sources
 * run, the same code only slower, until the next `npm run build`.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The latest modification time of `dir` and of everything under it. */
function lastChange(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? lastChange(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** `builtEntry`: a file under `root`/dist, e.g. dist/cli/main.js. */
export function buildIsCurrent(root, builtEntry) {
  try {
    return statSync(join(root, builtEntry)).mtimeMs >= lastChange(join(root, "src"));
  } catch {
    return false; // no build yet
  }
}
