/** What the routes are built from: parsed config and the long-lived services. */
import type { onRequestHookHandler } from "fastify";
import type { KeyStatusCache } from "./auth/key-status.ts";
import type { TokenService } from "./auth/tokens.ts";
import type { Config } from "./config.ts";
import type { Metrics } from "./metrics.ts";
import type { OidcSignIn } from "./operators/oidc.ts";
import type { OperatorAuth } from "./operators/operator-auth.ts";
import type { RateLimits } from "./rate-limit/index.ts";
import type { Store } from "./store/store.ts";
import type { Lookup } from "./webhooks/address-guard.ts";

export interface AppContext {
  config: Config;
  store: Store;
  tokens: TokenService;
  /** Key status for the bearer guard (tokens of a revoked key are refused within 2 s). */
  keyStatus: KeyStatusCache;
  /**
   * Key rows for login, its own cache so that a login never warms the guard's entries: the
   * guard's first look at a key after a revoke still reads the store.
   */
  loginKeys: KeyStatusCache;
  /** Prometheus metrics of this app instance; the bot and the dispatcher record into it too. */
  metrics: Metrics;
  /** Failed-login and per-company limits (SPEC §8). */
  rateLimits: RateLimits;
  /** onRequest hook of every protected route; sets `request.tenant`, then applies the company's rate limit. */
  bearerGuard: onRequestHookHandler;
  /** Operator tokens and console sessions (SPEC §12.1), looked up in the store by every process. */
  operatorAuth: OperatorAuth;
  /** Console sign-in through the identity provider (SPEC §19); undefined when OIDC_ISSUER is not set. */
  oidc?: OidcSignIn;
  /** How intake resolves webhook hosts; the system resolver when unset (tests give a slow one). */
  webhookLookup?: Lookup;
}
