// `npm ci` and `npm install` run this last: it builds dist/, from which the admin CLI starts
// fastest (bin/cli.mjs says why). An install without the dev dependencies (--omit=dev) has no
// TypeScript compiler to build with; the CLI then runs its sources under tsx, as `npm start` does.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

try {
  createRequire(import.meta.url).resolve("typescript");
} catch {
  console.log("prepare: no TypeScript compiler (dev dependencies left out), so no build; the CLI runs its sources under tsx");
  process.exit(0);
}
const build = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
process.exit(build.status ?? 1);
