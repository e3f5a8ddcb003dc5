/** A built app on a fresh store of one backend, with helpers to make tenants and tokens. */
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { buildApp, type AppDeps } from "../../src/app.ts";
import { createKey, type CreatedKey } from "../../src/admin/admin.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import type { Store } from "../../src/store/store.ts";
import { countRows, openFreshStore, queryRows, type Backend, type RowCounts } from "./backends.ts";

export const TEST_JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";

export interface Tenant extends CreatedKey {
  token: string;
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  databaseUrl: string;
  /** Row totals across all companies, read past the store (see backends.ts). */
  countRows(): Promise<RowCounts>;
  /** Rows of a query run past the store ($1… parameters on both backends). */
  query<R extends Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** The webhook events stored for an item, oldest first, read past the store. */
  outboxEvents(workItemId: number): Promise<string[]>;
  /** Creates a company with an API key and logs in through the real route. */
  tenant(companyId: number): Promise<Tenant>;
  close(): Promise<void>;
}

/** `deps` are the app's optional dependencies (a webhook host resolver, say); the store is made here. */
export async function createTestApp(backend: Backend, env: Record<string, string> = {}, deps: Omit<AppDeps, "store"> = {}): Promise<TestApp> {
  const fresh = await openFreshStore(backend);
  const config = loadConfig({ DATABASE_URL: fresh.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: "silent", RATE_LIMIT_TENANT_RPS: "0", ...env });
  const app = await buildApp(config, { ...deps, store: fresh.store });
  await app.ready();
  return {
    app,
    store: fresh.store,
    config,
    databaseUrl: fresh.databaseUrl,
    countRows: () => countRows(fresh.location),
    query: (sql, params) => queryRows(fresh.location, sql, params),
    outboxEvents: async (workItemId) =>
      (
        await queryRows<{ event_type: string }>(fresh.location, "SELECT event_type FROM webhook_outbox WHERE work_item_id = $1 ORDER BY created_at, event_type", [
          workItemId,
        ])
      ).map((row) => row.event_type),
    async tenant(companyId) {
      const key = await createKey(fresh.store, { companyId });
      const response = await app.inject({ method: "POST", url: "/api/Login/Authenticate", payload: { apiKey: key.apiKey, secret: key.secret } });
      if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
      return { ...key, token: response.json<{ bearerToken: string }>().bearerToken };
    },
    async close() {
      await app.close();
      await fresh.cleanup();
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A body that passes validation and the authority simulator's rules. */
export function validWorkItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerReference: "ORDER-1",
    documentReference: "DOC-1",
    productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest" },
    destinationCountry: { sendValue: "DE" },
    exportDate: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    senderChamberOfCommerceNo: { sendValue: "12345678" },
    senderDomestic: { sendValue: "true" },
    receiverChamberOfCommerceNo: { sendValue: "87654321" },
    receiverDomestic: { sendValue: "false" },
    plannedLoad: 31.5,
    ...overrides,
  };
}

export function problem(response: LightMyRequestResponse) {
  return response.json<{ type: string; title: string; status: number; detail: string; instance: string; traceId: string; errors?: Record<string, string[]> }>();
}
