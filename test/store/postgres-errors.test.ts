/** Which PostgreSQL driver errors mean "unavailable, retry" (503) and which are real failures. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { StoreUnavailableError } from "../../src/store/errors.ts";
import { storeError } from "../../src/store/postgres/errors.ts";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

test("connection failures, shutdowns, pool timeouts and lock conflicts become StoreUnavailableError", () => {
  const unavailable = [
    withCode("ECONNREFUSED"),
    withCode("ECONNRESET"),
    withCode("ETIMEDOUT"),
    withCode("57P01", "terminating connection due to administrator command"),
    withCode("57P03", "the database system is starting up"),
    withCode("08006"),
    withCode("08001"),
    withCode("53300", "sorry, too many clients already"),
    withCode("40P01", "deadlock detected"),
    withCode("40001"),
    new Error("timeout exceeded when trying to connect"),
    new Error("Connection terminated unexpectedly"),
    new Error("Client has encountered a connection error and is not queryable"),
  ];
  for (const error of unavailable) {
    const mapped = storeError(error);
    assert.ok(mapped instanceof StoreUnavailableError, `${(error as { code?: string }).code ?? error.message}`);
    assert.equal((mapped as StoreUnavailableError).cause, error, "the cause is kept for the log");
    assert.doesNotMatch((mapped as Error).message, /terminat|clients|deadlock|timeout/, "the message is ours, not the driver's");
  }
});

test("constraint violations, bad data and programming errors stay what they are", () => {
  for (const error of [withCode("23505"), withCode("23503"), withCode("22P02"), withCode("42P01"), new Error("boom"), new TypeError("x")]) {
    assert.equal(storeError(error), error);
  }
});
