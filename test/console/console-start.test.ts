/** The start-up log line tells where the console is (issue 41): operators find it from the log. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sqliteBackend } from "../helpers/backends.ts";
import { parseLine, startServer, stopAll } from "../helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());

test("the started line names the API reference and the console", { timeout: HANG_TIMEOUT_MS }, async () => {
  const data = await sqliteBackend.create();
  try {
    const server = await startServer({ DATABASE_URL: data.databaseUrl });
    const started = server.lines.map(parseLine).find((line) => line?.msg === "work-item-api started");
    assert.ok(started, server.output());
    assert.equal(started.console, `${started.address}/console`);
    assert.equal(started.docs, `${started.address}/docs`);
    await server.stop();
  } finally {
    await data.cleanup();
  }
});
