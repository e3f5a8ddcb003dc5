/**
 * The Redis on 127.0.0.1:6379 that the shared-rate-limit tests use. Outside CI a missing Redis
 * skips those tests with a loud message; in CI it fails them, since CI promises a Redis.
 */
import { connect } from "node:net";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export async function redisAvailable(): Promise<boolean> {
  // Two tries with a generous timeout: on a busy machine a first connect can be slow.
  return (await tryConnect()) || (await tryConnect());
}

async function tryConnect(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(3000);
    socket.once("connect", () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** undefined when the tests may run; otherwise the reason to skip (and a warning on stderr). */
export async function redisSkipReason(): Promise<string | undefined> {
  if (await redisAvailable()) return undefined;
  if (process.env.CI) throw new Error(`Redis is not reachable at ${REDIS_URL}, and CI promises one`);
  const reason = `Redis is not reachable at ${REDIS_URL}; shared rate-limit tests SKIPPED`;
  process.stderr.write(`\n!!! ${reason}\n\n`);
  return reason;
}

/** A port on which nothing listens (for "Redis is down" tests). */
export const CLOSED_REDIS_URL = "redis://127.0.0.1:1";
