/**
 * `npm run demo` end to end, as a newcomer runs it: its printed outcome table, its verified
 * webhooks, and that every process it started is gone afterwards. Without the bot command the
 * demo must fail fast with a clear message instead.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startScript } from "./helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "./helpers/waiting.ts";

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

async function runDemo(args: string[] = []): Promise<DemoRun> {
  const started = Date.now();
  const demo = startScript("scripts/demo.ts", args, { LOG_LEVEL: "warn" });
  // On SIGTERM the demo stops the processes it started before it exits.
  const timer = setTimeout(() => void demo.stop(10_000), HANG_TIMEOUT_MS);
  const code = await demo.exited.finally(() => clearTimeout(timer));
  return { code, stdout: demo.stdout(), stderr: demo.stderr(), seconds: (Date.now() - started) / 1000 };
}

function assertStoppedEverything(run: DemoRun): void {
  const match = /Stopped the processes the demo started \(pid ([\d, ]+)\)/.exec(run.stdout);
  assert.ok(match, `the demo says which processes it stopped:\n${run.stdout}`);
  for (const pid of match[1]!.split(", ").map(Number)) {
    assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, `pid ${pid} is gone`);
  }
}

describe("npm run demo", { timeout: HANG_TIMEOUT_MS }, () => {
  test("submits four items, runs the bot, verifies the webhooks and prints each outcome", async () => {
    // The demo's own wait for outcomes and webhooks: as long as the test's, short of a hang.
    const run = await runDemo(["--timeout", String(HANG_TIMEOUT_MS / 1000)]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const rows = new Map<string, { status: string; outcome: string; webhook: string }>();
    for (const line of run.stdout.split("\n")) {
      const match = /^\s+\d+\s+(DEMO-\d)\s+(\w+)\s+(workitem\.\w+ \(signature verified\)|none received)\s+(.+)$/.exec(line);
      if (match) rows.set(match[1]!, { status: match[2]!, webhook: match[3]!, outcome: match[4]! });
    }
    assert.deepEqual([...rows.keys()].sort(), ["DEMO-1", "DEMO-2", "DEMO-3", "DEMO-4"], run.stdout);
    for (const name of ["DEMO-1", "DEMO-2", "DEMO-4"]) {
      assert.equal(rows.get(name)!.status, "Successful", name);
      assert.equal(rows.get(name)!.webhook, "workitem.succeeded (signature verified)", name);
      assert.notEqual(rows.get(name)!.outcome, "-", `${name} shows its registration number`);
    }
    assert.equal(rows.get("DEMO-3")!.status, "Failed");
    assert.match(rows.get("DEMO-3")!.outcome, /senderChamberOfCommerceNo/);
    assert.equal(rows.get("DEMO-3")!.webhook, "workitem.failed (signature verified)");
    assert.match(run.stdout, /Done: 3 successful, 1 failed, 4 webhooks received and verified/);
    assert.match(run.stdout, /items done/, "progress was shown while waiting");
    assertStoppedEverything(run);
  });

  test("a wrong flag is a usage error", async () => {
    const run = await runDemo(["--nonsense"]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /usage: npm run demo/);
  });
});
