// Runs every test file under test/ with node's test runner through tsx, and ends with the
// runner's own pass/fail summary. Pass file paths or substrings to run a subset.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

// Run apart, each by its own script, only when named: the image's suites build and run containers,
// minutes each (`npm run test:image`; CI runs it after this); the Citus cluster's start three
// PostgreSQL clusters and measure rates and gaps that the rest of the suite's load would distort
// (`npm run test:citus`; skipped without Citus, which CI does not have).
const SEPARATE = ["test/image/", "test/store/citus-cluster.test.ts"];
const filters = process.argv.slice(2);
const files = collect("test")
  .map((file) => relative(".", file))
  .filter((file) => (filters.length === 0 ? !SEPARATE.some((separate) => file.startsWith(separate)) : filters.some((filter) => file.includes(filter))))
  .sort();
// The longest files start first, so that none of them begins near the end and runs alone while
// the other slots idle (each takes 40–155 s of a 12-minute run; the rest are a few seconds to 30).
const LONGEST_FIRST = [
  "test/store/rolling-upgrade.test.ts",
  "test/doc-examples.test.ts",
  "test/console/console-glance.test.ts",
  "test/console/console-browser.test.ts",
  "test/console/console-security.test.ts",
  "test/client/package.test.ts",
  "test/security/fuzz.test.ts",
  "test/cli/operators-cli.test.ts",
  "test/bot/run-once.test.ts",
];
const rank = (file) => {
  const index = LONGEST_FIRST.indexOf(file);
  return index < 0 ? LONGEST_FIRST.length : index;
};
files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
if (files.length === 0) {
  console.error(`no test files match ${filters.join(" ")}`);
  process.exit(1);
}
// Three files at a time on a 2-core machine: many tests wait on real time (leases, timeouts,
// backoff), and with two at a time the cores idled 15% of the run (671 s against 608 s).
const concurrency = process.env.TEST_CONCURRENCY ?? "3";
// The tests' SQLite files, like everything else they write to the temp folder, go to memory
// when the machine has a tmpfs for it: each commit still calls fsync, which costs nothing there
// and a millisecond or more on disk, where it set the pace of every test that files items.
const scratch = process.env.TMPDIR ?? (existsSync("/dev/shm") ? "/dev/shm" : undefined);
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...files],
  { stdio: "inherit", env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "silent", ...(scratch ? { TMPDIR: scratch } : {}) } },
);
process.exit(result.status ?? 1);
