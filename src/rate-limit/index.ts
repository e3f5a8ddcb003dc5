/** The API's rate limits (SPEC §8), built once per app from the config. */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.ts";
import { createLimiterFactory } from "./limiters.ts";
import { LoginThrottle, type SignInOutcome } from "./login-throttle.ts";
import { createTenantLimit, type TenantLimit } from "./tenant-limit.ts";

export interface RateLimits {
  /** "memory": per process; "redis": shared by every process using the same REDIS_URL. */
  readonly mode: "memory" | "redis";
  readonly login: LoginThrottle;
  /** Console sign-in failures (SPEC §12.1), the same rules with the operator's e-mail as the key. */
  readonly operatorSignIn: LoginThrottle;
  /** Undefined when RATE_LIMIT_TENANT_RPS or RATE_LIMIT_TENANT_BURST is 0. */
  readonly tenant: TenantLimit | undefined;
  /**
   * Resolves once the shared counters can be used (at most a couple of seconds). Until then
   * a process counts in memory, so a fresh process would start its first minute alone.
   */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** Counts each sign-in attempt by where it came and what became of it (the metric). */
export type SignInCounter = (surface: "api" | "console", outcome: SignInOutcome) => void;

export function createRateLimits(config: Config, logger: FastifyBaseLogger, countSignIn: SignInCounter = () => {}): RateLimits {
  const factory = createLimiterFactory(config.redisUrl, logger);
  return {
    mode: factory.mode,
    login: new LoginThrottle(factory, config.loginFailuresPerMinute, "login-fail", (outcome) => countSignIn("api", outcome)),
    operatorSignIn: new LoginThrottle(factory, config.loginFailuresPerMinute, "operator-signin-fail", (outcome) => countSignIn("console", outcome)),
    tenant: createTenantLimit(factory, config.rateLimitTenantRps, config.rateLimitTenantBurst),
    ready: () => factory.ready(),
    close: () => factory.close(),
  };
}
