// Run in the image's build stage, after `npm prune --omit=dev`: takes out of node_modules what
// the service never loads from the image, so the image stays small (SPEC §21, at most 250 MB).
// Each rule is a kind of file no code path reads; test/image/image.test.ts imports every module
// of dist/ in the image and runs the service on both stores, so a rule that took too much fails.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

const root = process.argv[2] ?? "node_modules";

/** Packages the image needs not: the compiled dist/ runs without a TypeScript loader. */
const UNUSED_PACKAGES = ["tsx", "esbuild", "@esbuild"];

/**
 * Folders at the top of a package that hold no code it loads: tests, docs, examples. Only at the
 * top: deeper down such a name may be code (yaml's dist/doc is).
 */
const UNUSED_FOLDERS = new Set(["test", "tests", "__tests__", "docs", "doc", "example", "examples", ".github", "benchmark", "benchmarks"]);
const UNUSED_IN_PACKAGE = {
  // Built: the addon is build/Release/better_sqlite3.node (kept below); deps/ and src/ are what it was built from.
  "better-sqlite3": ["deps", "src"],
  // date-holidays loads astronomia through require(), which its exports map sends to lib/*.cjs; src/ and data/ are the ESM copy.
  astronomia: ["src", "data"],
  // moment-timezone loads moment.js, its main; the rest are other builds and locales the service never asks for.
  moment: ["min", "locale", "dist", "src", "ts3.1-typings"],
};

/** Folders of which one file is used: better-sqlite3's build leaves its objects, Makefiles and a static SQLite beside the addon. */
const ONLY_FILE_USED = { "better-sqlite3/build": "Release/better_sqlite3.node" };

/**
 * A package built for several module systems ships one copy each; Node loads `build/src` (CommonJS)
 * or `build/esm` through the exports map, never `build/esnext`, which only bundlers ask for.
 */
const BUNDLER_ONLY_BUILDS = { "@opentelemetry": "build/esnext" };

/** Files no program reads: type declarations, source maps, TypeScript sources, prose. */
const UNUSED_FILE = /\.(?:d\.[cm]?ts|map|tsbuildinfo|md|markdown)$|(?<!\.d)\.[cm]?ts$/;

const entriesOf = (folder) => (existsSync(folder) ? readdirSync(folder, { withFileTypes: true }) : []);

let bytes = 0;
const remove = (path) => {
  bytes += size(path);
  rmSync(path, { recursive: true, force: true });
};
function size(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  return stat.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + size(join(path, name)), 0) : stat.size;
}

/** Everything under `folder` but the file `kept`. */
function keepOnly(folder, kept) {
  for (const entry of entriesOf(folder)) {
    const path = join(folder, entry.name);
    if (path === kept) continue;
    if (entry.isDirectory() && kept.startsWith(`${path}/`)) keepOnly(path, kept);
    else remove(path);
  }
}

function walk(dir) {
  const packageRoot = existsSync(join(dir, "package.json"));
  for (const entry of entriesOf(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (packageRoot && UNUSED_FOLDERS.has(entry.name)) remove(path);
      else walk(path);
    } else if (UNUSED_FILE.test(entry.name)) remove(path);
  }
}

for (const name of UNUSED_PACKAGES) remove(join(root, name));
for (const [name, paths] of Object.entries(UNUSED_IN_PACKAGE)) for (const path of paths) remove(join(root, name, path));
for (const [folder, kept] of Object.entries(ONLY_FILE_USED)) keepOnly(join(root, folder), join(root, folder, kept));
for (const [scope, build] of Object.entries(BUNDLER_ONLY_BUILDS)) {
  for (const entry of entriesOf(join(root, scope))) remove(join(root, scope, entry.name, build));
}
walk(root);
process.stdout.write(`prune-node-modules: ${(bytes / 1e6).toFixed(1)} MB taken out of ${root}\n`);
