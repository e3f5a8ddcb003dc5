/**
 * Picks the authority adapter from config: `http` to AUTHORITY_URL, or, when it is unset, the
 * built-in simulator on a free loopback port reached through the very same `http` adapter.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { startAuthoritySim, type AuthoritySim } from "../authority-sim/server.ts";
import type { AuthorityAdapter } from "../authority/protocol.ts";
import { createHttpAuthorityAdapter } from "./http-authority-adapter.ts";

export interface OpenedAuthority {
  adapter: AuthorityAdapter;
  /** The built-in simulator, when AUTHORITY_URL is unset. */
  sim: AuthoritySim | undefined;
  close(): Promise<void>;
}

export async function openAuthority(config: Pick<Config, "authorityUrl" | "authorityTimeoutMs" | "authorityAbandonMs" | "authoritySim">): Promise<OpenedAuthority> {
  const sim = config.authorityUrl ? undefined : await startAuthoritySim({ ...config.authoritySim, host: "127.0.0.1", port: 0 });
  const adapter = createHttpAuthorityAdapter({ baseUrl: config.authorityUrl ?? sim!.url, timeoutMs: config.authorityTimeoutMs, abandonMs: config.authorityAbandonMs });
  return {
    adapter,
    sim,
    async close() {
      await adapter.close();
      await sim?.close();
    },
  };
}

/** A worker id that names the host and process, unique per start. */
export const newWorkerId = () => `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
