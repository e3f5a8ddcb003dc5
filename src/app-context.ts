/** What the routes are built from: parsed config and the long-lived services. */
import type { onRequestHookHandler } from "fastify";
import type { KeyStatusCache } from "./auth/key-status.ts";
import type { TokenService } from "./auth/tokens.ts";
import type { Config } from "./config.ts";
import type { Store } from "./store/store.ts";

export interface AppContext {
  config: Config;
  store: Store;
  tokens: TokenService;
  keyStatus: KeyStatusCache;
  /** onRequest hook of every protected route; sets `request.tenant`. */
  bearerGuard: onRequestHookHandler;
}
