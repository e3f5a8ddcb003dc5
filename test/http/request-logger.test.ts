import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import { bindRequestLog, lazyChildLoggerFactory } from "../../src/http/request-logger.ts";
import { createLogger } from "../../src/logger.ts";

function capture(level: "warn" | "info") {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ logLevel: level }, stream) as unknown as FastifyBaseLogger;
  return { logger, lines };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

test("a request logger writes enabled levels with the request id, and nothing below the level", async () => {
  const { logger, lines } = capture("warn");
  const child = lazyChildLoggerFactory(logger, { reqId: "req-1" }, {});
  child.info("not written at warn");
  child.debug("nor this");
  child.error({ code: "X" }, "written");
  child.warn("also written");
  await flush();
  assert.deepEqual(
    lines.map((l) => [l.msg, l.reqId, l.code]),
    [
      ["written", "req-1", "X"],
      ["also written", "req-1", undefined],
    ],
  );
  assert.equal(child.level, "warn");
});

test("a request logger keeps redaction, and its own children carry both bindings", async () => {
  const { logger, lines } = capture("info");
  const child = lazyChildLoggerFactory(logger, { reqId: "req-2" }, {});
  child.info({ req: { headers: { authorization: "Bearer secret-token" } } }, "incoming");
  child.child({ step: "store" }).info("nested");
  await flush();
  assert.equal(lines.length, 2);
  assert.equal((lines[0]!.req as { headers: { authorization: string } }).headers.authorization, "[redacted]");
  assert.equal(lines[0]!.reqId, "req-2");
  assert.deepEqual([lines[1]!.reqId, lines[1]!.step], ["req-2", "store"]);
});

test("bindings added to a request logger reach the lines after them, before and after it first logs", async () => {
  const { logger, lines } = capture("info");
  const child = lazyChildLoggerFactory(logger, { reqId: "req-3" }, {});
  bindRequestLog(child, { trace_id: "t1" });
  child.info("first");
  bindRequestLog(child, { span_id: "s1" });
  child.info("second");
  child.child({ step: "store" }).info("nested");
  await flush();
  assert.deepEqual(
    lines.map((l) => [l.msg, l.reqId, l.trace_id, l.span_id]),
    [
      ["first", "req-3", "t1", undefined],
      ["second", "req-3", "t1", "s1"],
      ["nested", "req-3", "t1", "s1"],
    ],
  );
});
