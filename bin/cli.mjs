#!/usr/bin/env node
/**
 * Starts the admin CLI (`npm run -s cli -- …`): the production build when it is current, else
 * the sources under tsx.
 *
 * Why not always tsx: even with its compile cache warm, tsx's loader hooks run for each of the
 * hundreds of modules a command loads, so `keys list` took 1.0 s under tsx and 0.35 s compiled
 * (a 2-core VM, quiet). `npm ci` builds dist/ (the `prepare` script).
 * `bin/build-state.mjs` says when the build is current.
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildIsCurrent } from "./build-state.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const built = "dist/cli/main.js";

if (buildIsCurrent(root, built)) {
  await import(pathToFileURL(join(root, built)).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(join(root, "src", "cli", "main.ts")).href);
}
