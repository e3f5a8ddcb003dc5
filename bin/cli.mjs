#!/usr/bin/env node
/**
 * Starts the admin CLI (`npm run -s cli -- …`): the production build when it is current, else
 * the sources under tsx.
 *
 * Why not always tsx: even with its compile cache warm, tsx's loader hooks run for each of the
 * hundreds of modules a command loads, so `keys list` took 1.0 s under tsx and 0.35 s compiled
 * (a 2-core VM, quiet). `npm ci` builds dist/ (the `prepare` script).
 *
 * The build is current while nothing under src/ (a file, or a folder, which changes when a file
 * is added or removed) is newer than dist/cli/main.js: after an edit or a checkout the CLI runs
 * the sources, the same code only slower, until the next `npm run build`.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const compiled = join(root, "dist", "cli", "main.js");

/** The latest modification time of `dir` and of everything under it. */
function lastChange(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? lastChange(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function buildIsCurrent() {
  try {
    return statSync(compiled).mtimeMs >= lastChange(join(root, "src"));
  } catch {
    return false; // no build yet
  }
}

if (buildIsCurrent()) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(join(root, "src", "cli", "main.ts")).href);
}
