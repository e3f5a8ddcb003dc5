/**
 * Adding and filing through real processes, for the tests that restore the embedded store (SPEC
 * §18, §24): an integrator's add over HTTP, and a worker that runs until every item is filed.
 */
import assert from "node:assert/strict";
import { idempotencyKeyOf } from "../../src/authority/protocol.ts";
import { queryRows } from "./backends.ts";
import { bearerTokenFrom, startServer, type Env } from "./processes.ts";
import { validWorkItem } from "./test-app.ts";
import { waitUntil } from "./waiting.ts";

/** An add over HTTP as the key's company: returns the new item's id. */
export async function signIn(baseUrl: string, key: { apiKey: string; secret: string }): Promise<(reference: string) => Promise<number>> {
  const bearerToken = await bearerTokenFrom(baseUrl, key);
  return async (reference) => {
    const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearerToken}`, "content-type": "application/json" },
      body: JSON.stringify(validWorkItem({ customerReference: reference })),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { workItemId: number }).workItemId;
  };
}

export interface FiledItem {
  status: string;
  applicationNumber: string | null;
  /** The key the authority knows it by. */
  idempotencyKey: string;
}

type StoredItem = {
  work_item_id: number;
  status: string;
  application_number: string | null;
  store_generation: number;
  generation_id: string | null;
};

/** Every item of the SQLite store at `path`, by id, with its idempotency key. */
export async function storedItems(path: string): Promise<Map<number, FiledItem>> {
  const rows = await queryRows<StoredItem>({ kind: "sqlite", path }, "SELECT work_item_id, status, application_number, store_generation, generation_id FROM work_items");
  return new Map(
    rows.map((row) => [
      Number(row.work_item_id),
      {
        status: row.status,
        applicationNumber: row.application_number,
        idempotencyKey: idempotencyKeyOf({ workItemId: Number(row.work_item_id), storeGeneration: Number(row.store_generation), generationId: row.generation_id }),
      },
    ]),
  );
}

/** Runs a worker until the store holds `expected` items, all Successful; returns them, by id. */
export async function fileEverything(env: Env, path: string, expected: number): Promise<Map<number, FiledItem>> {
  const worker = await startServer({ ...env, ROLE: "worker", BOT_SCHEDULE: "* * * * * *" });
  const items = await waitUntil(
    `all ${expected} items to be registered`,
    async () => {
      const items = await storedItems(path);
      return items.size === expected && [...items.values()].every((item) => item.status === "Successful") ? items : undefined;
    },
    undefined,
    200,
  );
  assert.equal((await worker.stop()).code, 0);
  return items;
}
