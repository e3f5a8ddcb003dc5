/**
 * Where rate-limit counters live. By default in this process's memory: each API process
 * enforces the limits on its own share of the traffic. With REDIS_URL the counters live in
 * Redis, so every process counts the same failures and the same requests (see
 * docs/security.md, "Rate limits", for what that buys).
 *
 * A limiter must never take the API down with it: when Redis is unreachable each limiter falls
 * back to an in-memory twin (rate-limiter-flexible's insurance limiter), a warning is logged
 * once per outage, and the shared counters take over again when Redis returns. Anything else
 * a limiter throws lets the request through (fail open) with a warning.
 */
import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { FastifyBaseLogger } from "fastify";

export interface LimiterSpec {
  /** Namespace of the counters, e.g. `login-fail-addr`. */
  keyPrefix: string;
  points: number;
  durationSeconds: number;
}

/** The few calls the API makes of a limiter; both backends behave the same. */
export interface Limiter {
  /** Counts `points`; resolves undefined when within the limit, else the wait in ms. */
  consume(key: string, points?: number): Promise<number | undefined>;
  /**
   * `consume` of one point for the per-request path: the answer goes to `answer` (undefined
   * within the limit, else the wait in ms) through a single promise reaction instead of a chain
   * of async functions, which cost a measurable share of a cheap request.
   */
  consumeOne(key: string, answer: (waitMs: number | undefined) => void): void;
  /** Points consumed in the current window (0 when none) and ms until it resets. */
  peek(key: string): Promise<{ consumed: number; msBeforeNext: number }>;
  reset(key: string): Promise<void>;
  /** Refuses every point of `key` for `ms` from now (the window then starts afresh). */
  block(key: string, ms: number): Promise<void>;
  /** The underlying library limiter, for composing (BurstyRateLimiter). */
  readonly raw: RateLimiterAbstract;
}

export interface LimiterFactory {
  readonly mode: "memory" | "redis";
  create(spec: LimiterSpec): Limiter;
  /** Wraps a library limiter (e.g. a composition of two) with the same fail-open rules. */
  wrap(raw: RawLimiter, name: string): Limiter;
  /** Resolves once Redis is connected, fails to connect, or times out; never rejects. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** A library limiter or a composition of them (BurstyRateLimiter has no delete). */
type RawLimiter = Pick<RateLimiterAbstract, "consume"> & Partial<Pick<RateLimiterAbstract, "get" | "delete" | "block">>;

const KEY_NAMESPACE = "wia:rl";
const CONNECT_TIMEOUT_MS = 2000;

export function createLimiterFactory(redisUrl: string | undefined, logger: FastifyBaseLogger): LimiterFactory {
  const redis = redisUrl === undefined ? undefined : connectRedis(redisUrl, logger);
  let warnedAt = 0;
  const failOpen = (name: string, error: unknown) => {
    // One line per limiter every 30 s is enough to see it; a log line per request is not.
    if (Date.now() - warnedAt > 30_000) {
      warnedAt = Date.now();
      logger.warn({ limiter: name, err: error }, "rate limiter failed; letting requests through");
    }
  };

  const wrap = (raw: RawLimiter, name: string): Limiter => {
    /** The wait a refusal asks for; anything else than a refusal lets the request through. */
    const waitOf = (outcome: unknown): number | undefined => {
      if (outcome instanceof RateLimiterRes) return Math.max(1, outcome.msBeforeNext);
      failOpen(name, outcome);
      return undefined;
    };
    return {
      raw: raw as RateLimiterAbstract,
      async consume(key, points = 1) {
        try {
          await raw.consume(key, points);
          return undefined;
        } catch (outcome) {
          return waitOf(outcome);
        }
      },
      consumeOne(key, answer) {
        let pending: Promise<unknown>;
        try {
          pending = raw.consume(key, 1);
        } catch (error) {
          answer(waitOf(error));
          return;
        }
        pending.then(
          () => answer(undefined),
          (outcome: unknown) => answer(waitOf(outcome)),
        );
      },
      async peek(key) {
        try {
          const result = raw.get ? await raw.get(key) : null;
          return { consumed: result?.consumedPoints ?? 0, msBeforeNext: result?.msBeforeNext ?? 0 };
        } catch (error) {
          failOpen(name, error);
          return { consumed: 0, msBeforeNext: 0 };
        }
      },
      async reset(key) {
        try {
          await raw.delete?.(key);
        } catch (error) {
          failOpen(name, error);
        }
      },
      async block(key, ms) {
        try {
          await raw.block?.(key, ms / 1000);
        } catch (error) {
          failOpen(name, error);
        }
      },
    };
  };

  return {
    mode: redis ? "redis" : "memory",
    wrap,
    create(spec) {
      const options = { keyPrefix: `${KEY_NAMESPACE}:${spec.keyPrefix}`, points: spec.points, duration: spec.durationSeconds };
      const memory = new RateLimiterMemory(options);
      if (!redis) return wrap(memory, spec.keyPrefix);
      const shared = new RateLimiterRedis({
        ...options,
        storeClient: redis,
        // Not connected: go straight to the in-memory twin instead of queueing behind a reconnect.
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      });
      return wrap(shared, spec.keyPrefix);
    },
    async ready() {
      if (!redis || redis.status === "ready") return;
      await new Promise<void>((resolve) => {
        // A refused connection will not turn into a ready one within the timeout: stop waiting.
        const done = () => {
          clearTimeout(timer);
          redis.off("ready", done);
          redis.off("error", done);
          resolve();
        };
        const timer = setTimeout(done, CONNECT_TIMEOUT_MS);
        redis.once("ready", done);
        redis.once("error", done);
      });
    },
    async close() {
      if (redis) redis.disconnect();
    },
  };
}

function connectRedis(url: string, logger: FastifyBaseLogger): Redis {
  const redis = new Redis(url, {
    // A limiter call must answer in milliseconds or not at all: no offline queue, one try,
    // and a short connect timeout. Reconnects continue in the background.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  let down = false;
  redis.on("error", (error: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err: { message: error.message } }, "Redis for rate limits is unreachable; limits are per process until it returns");
  });
  redis.on("ready", () => {
    if (down) logger.info("Redis for rate limits is back; limits are shared again");
    down = false;
  });
  return redis;
}
