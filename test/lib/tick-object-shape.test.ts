// The server holds one process.nextTick object so that a full garbage collection between
// requests cannot free the ticks' hidden class (src/lib/tick-object-shape.ts has why). This
// checks, in a process of its own with V8's natives syntax, that ticks queued after full
// collections while nothing is pending still share the held object's hidden class.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { test } from "node:test";
import { REPO_ROOT } from "../../scripts/lib/processes.ts";

const MODULE = join(REPO_ROOT, "src", "lib", "tick-object-shape.ts");

const PROBE = `
import { executionAsyncResource } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
const { heldTickObject } = await import(${JSON.stringify(pathToFileURL(MODULE).href)});
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)");
await sleep(10);
const held = heldTickObject();
const results = [];
for (let round = 0; round < 3; round++) {
  await sleep(10);
  globalThis.gc();
  globalThis.gc();
  const later = await new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
  results.push(sameMap(held, later));
}
process.stdout.write(JSON.stringify({
  symbols: held ? Object.getOwnPropertySymbols(held).map(String) : null,
  keys: held ? Object.keys(held) : null,
  sameAfterCollections: results,
  sameAsPlainObject: sameMap(held ?? {}, {}),
}));
`;

test("a tick queued after full collections shares the held tick object's hidden class", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--allow-natives-syntax", "--expose-gc", "--input-type=module", "-e", PROBE], { cwd: REPO_ROOT });
  const probe = JSON.parse(stdout) as { symbols: string[] | null; keys: string[] | null; sameAfterCollections: boolean[]; sameAsPlainObject: boolean };
  assert.deepEqual(probe.symbols, ["Symbol(async_id_symbol)", "Symbol(trigger_async_id_symbol)"], "the held object is a tick object");
  assert.deepEqual(probe.keys, ["callback", "args"]);
  assert.deepEqual(probe.sameAfterCollections, [true, true, true]);
  assert.equal(probe.sameAsPlainObject, false, "the map comparison tells shapes apart");
});

test("the server loads the tick holder before any other module", () => {
  const imports = readFileSync(join(REPO_ROOT, "src", "server.ts"), "utf8").match(/^import .*$/gm) ?? [];
  assert.equal(imports[0], 'import "./lib/tick-object-shape.ts";');
});
