/**
 * `npm start` stops as a whole (SPEC §11.5): SIGTERM or SIGINT sent to the npm process alone (as
 * a terminal's Ctrl-C, a process manager or a container runtime sends it) shuts the service down
 * gracefully, no child process is left behind, and the port is free again.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, describe, test } from "node:test";
import { sqliteBackend } from "../helpers/backends.ts";
import { groupGone, parseLine, startServer, stopAll } from "../helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** Whether this process can listen on the port: nothing else holds it. */
const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });

describe("npm start and signals", { timeout: HANG_TIMEOUT_MS }, () => {
  after(() => stopAll());

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} to the npm process: a graceful stop, no process left, the port free`, async () => {
      const data = await sqliteBackend.create();
      try {
        const server = await startServer({ DATABASE_URL: data.databaseUrl }, { launcher: "npm" });
        const { port } = server;
        assert.equal(await portIsFree(port), false, "the server holds its port");
        process.kill(server.pid, signal); // npm's pid only, not its process group
        assert.ok(await groupGone(server.pid, HANG_TIMEOUT_MS), `every process of npm start ended after ${signal}\n${server.output().slice(-4000)}`);
        assert.ok(await portIsFree(port), "the port is free");
        const finished = server.lines.map(parseLine).find((line) => line?.msg === "shutdown finished");
        assert.equal(finished?.reason, signal, "the server shut down on the signal");
        assert.equal(finished?.clean, true, "and cleanly");
      } finally {
        await data.cleanup();
      }
    });
  }
});
