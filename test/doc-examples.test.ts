/**
 * Every shell example of the README and of docs/ runs, so that none can rot: the ```sh and
 * ```bash blocks of a file, in order, in one bash session, as a reader types them into a fresh
 * clone, on a fresh store and a free loopback port. A block that is not meant to run (it installs,
 * benchmarks, or needs a production host) says so on the line before it:
 * `<!-- not run: why -->`.
 *
 * What the test changes, and nothing else: `localhost:8080` becomes the port it chose for the
 * service, `localhost:8090` the one it chose for the authority simulator (`npm run authority-sim`
 * listens there through AUTHORITY_SIM_PORT), and `npm ci` does nothing (this checkout is
 * installed). The documents are `DOCUMENTS` (test/helpers/documents.ts): the README, docs/*.md and
 * packages/client/README.md, each in a session of its own. A curl that answers an
 * HTTP error fails the block, unless the example asks for the status itself (`-i`) or for
 * silence (`-f`). The session runs in a folder of links to this checkout, so files an example
 * writes (openapi.json) land there, not in the repository.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { launch } from "../scripts/lib/processes.ts";
import { DOCUMENTS } from "./helpers/documents.ts";
import { freePort, REPO_ROOT } from "./helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "./helpers/waiting.ts";

interface ShellBlock {
  file: string;
  /** 1-based line of the block's first command. */
  line: number;
  commands: string[];
  /** Why it is not run, from the `<!-- not run: … -->` line before it. */
  notRun?: string;
}

const FENCE = /^```(sh|bash)$/;
const NOT_RUN = /^<!-- not run: (.*) -->$/;

function shellBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(join(REPO_ROOT, file), "utf8").split("\n");
  const blocks: ShellBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (!lines[index]!.startsWith("```")) continue;
    const end = lines.indexOf("```", index + 1);
    assert.ok(end > index, `${file}:${index + 1}: a fence that is never closed`);
    if (FENCE.test(lines[index]!)) {
      let before = index - 1;
      while (before >= 0 && lines[before]!.trim() === "") before--;
      const notRun = NOT_RUN.exec(lines[before] ?? "")?.[1];
      blocks.push({ file, line: index + 2, commands: lines.slice(index + 1, end), ...(notRun === undefined ? {} : { notRun }) });
    }
    index = end;
  }
  return blocks;
}

/** Shell functions the session starts with: how `npm ci` and curl behave under the test. */
const PRELUDE = String.raw`set -eo pipefail
trap 'status=$?; printf "\n::exit %d\n" "$status"' EXIT
trap 'echo "::failed at line $LINENO: $BASH_COMMAND" >&2' ERR
npm() { if [ "$1" = ci ]; then echo "(npm ci: this checkout is installed)"; else command npm "$@"; fi; }
curl() {
  local arg
  for arg in "$@"; do
    if [[ "$arg" =~ ^-[a-zA-Z]*[fi][a-zA-Z]*$ || "$arg" == --fail || "$arg" == --include ]]; then command curl "$@"; return; fi
  done
  command curl --fail-with-body "$@"
}`;

/** A folder that looks like this checkout (a link for each of its entries) and takes what the examples write. */
function checkoutOfLinks(into: string): string {
  const checkout = join(into, "checkout");
  mkdirSync(checkout);
  for (const name of readdirSync(REPO_ROOT)) {
    if (![".git", "data", "openapi.json", "work-item-api.d.ts"].includes(name)) symlinkSync(join(REPO_ROOT, name), join(checkout, name));
  }
  return checkout;
}

interface SessionResult {
  exitCode: number;
  output: string;
  /** The source line of the command that failed, when one did. */
  failedAt?: string;
}

async function runSession(blocks: ShellBlock[], scratch: string): Promise<SessionResult> {
  const port = await freePort();
  const simulatorPort = await freePort();
  const script = [PRELUDE];
  const origins = PRELUDE.split("\n").map(() => "the prelude");
  for (const block of blocks) {
    script.push(`printf "\\n::block %s\\n" "${block.file}:${block.line}"`);
    origins.push("");
    block.commands.forEach((command, offset) => {
      script.push(command.replaceAll("localhost:8080", `127.0.0.1:${port}`).replaceAll("localhost:8090", `127.0.0.1:${simulatorPort}`));
      origins.push(`${block.file}:${block.line + offset}`);
    });
  }
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTHORITY_SIM_PORT: String(simulatorPort),
    DATABASE_URL: `sqlite:${join(scratch, "work-item-api.db")}`,
    LOG_LEVEL: "warn",
    REDOCLY_TELEMETRY: "off",
  };
  for (const name of ["JWT_SECRET", "DATA_ENCRYPTION_KEY", "ROLE", "BATCH_MAX_ITEMS", "TEST_CONCURRENCY", "MIGRATE_ON_START", "AUTHORITY_URL", "BOT_SCHEDULE"]) delete env[name];
  const session = launch("bash", ["-c", script.join("\n")], { env, cwd: checkoutOfLinks(scratch), stopGraceMs: 5_000 });
  try {
    // The session ends with a service still running in the background (`npm start &`), which
    // holds its output open: its end is the EXIT trap's line. The examples' curls end no line.
    const exitCode = await session.waitForLine("the session's end", (line) => /^::exit (\d+)$/.exec(line)?.[1], HANG_TIMEOUT_MS);
    const failedLine = /::failed at line (\d+)/.exec(session.stderr())?.[1];
    return { exitCode: Number(exitCode), output: session.output(), ...(failedLine === undefined ? {} : { failedAt: origins[Number(failedLine) - 1] ?? `script line ${failedLine}` }) };
  } finally {
    await session.stop();
  }
}

describe("the shell examples of the README and docs/", { timeout: HANG_TIMEOUT_MS }, () => {
  const scratches: string[] = [];
  after(() => {
    for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
  });

  test("each block either runs or says why not, and the README's opening lines are not run", () => {
    const blocks = DOCUMENTS.flatMap(shellBlocks);
    for (const block of blocks.filter((each) => each.notRun !== undefined)) assert.ok(block.notRun!.trim().length >= 10, `${block.file}:${block.line} says why it is not run`);
    const opening = shellBlocks("README.md")[0]!;
    assert.match(opening.commands.join("\n"), /^npm ci && npm start .*\nnpm ci && npm test /);
    assert.ok(opening.notRun, "the README's opening block (npm ci, npm test) is not run");
    assert.ok(blocks.filter((each) => each.notRun === undefined).length >= 10, "most examples run");
  });

  for (const file of DOCUMENTS) {
    const runnable = shellBlocks(file).filter((block) => block.notRun === undefined);
    if (runnable.length === 0) continue;
    test(`${file}: its ${runnable.length} shell examples run in order against a fresh service`, async () => {
      const scratch = mkdtempSync(join(tmpdir(), "wia-doc-examples-"));
      scratches.push(scratch);
      const result = await runSession(runnable, scratch);
      assert.equal(result.exitCode, 0, `failed at ${result.failedAt ?? "?"}:\n${result.output}`);
    });
  }
});
