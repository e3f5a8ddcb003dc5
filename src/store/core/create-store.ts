/**
 * The one implementation of the Store interface: the methods of core/, each written once
 * over the database port, plus the few a backend brings itself (the intake fast path, the
 * generated server keys, its size and free space, closing).
 */
import { GENERATION_IDS_MIGRATION } from "../migrations.ts";
import { statement, type DatabasePort } from "../port.ts";
import type { AddWorkItemOutcome, AddWorkItemsOutcome, NewWorkItem, NewWorkItems, StorageStore, Store, StoreFlags, StoreIdentity } from "../store.ts";
import { accountsStore } from "./accounts.ts";
import { breakerStore } from "./breaker.ts";
import { capacityStore } from "./capacity.ts";
import { companyErasureStore } from "./company-erasure.ts";
import { addFollowUp } from "./follow-ups.ts";
import { erasureStore } from "./erasure.ts";
import { eventsStore } from "./events.ts";
import { exportStore } from "./export.ts";
import { filingQueueStore } from "./filing-queue.ts";
import { operatorActionsStore } from "./operator-actions.ts";
import { operatorItemsStore } from "./operator-items.ts";
import { operatorReadsStore } from "./operator-reads.ts";
import { operatorsStore } from "./operators.ts";
import { outcomesStore } from "./outcomes.ts";
import { webhookSecretsStore, webhooksStore } from "./webhooks.ts";
import { workItemsStore } from "./work-items.ts";

/** What a backend folder provides. */
export interface Backend {
  kind: Store["kind"];
  flags: StoreFlags;
  db: DatabasePort;
  /** Intake's fast path: group commit, durable before it resolves. */
  addWorkItem(input: NewWorkItem): Promise<AddWorkItemOutcome>;
  getOrCreateServerKey: Store["getOrCreateServerKey"];
  /** A bulk add through the same fast path, all its items in one transaction. */
  addWorkItems(input: NewWorkItems): Promise<AddWorkItemsOutcome>;
  /** The schema's migrations against the ones this version knows. */
  schemaStatus: Store["schemaStatus"];
  /** Applies the pending migrations (`db migrate`), and answers the status after. */
  migrate: Store["migrate"];
  /** Its size and free space, which each database reckons in its own way. */
  storage: StorageStore;
  /** Settles what is in flight, then closes the database. */
  close(): Promise<void>;
}

const READ_STORE_IDENTITY = statement("read_store_identity", "SELECT generation, generation_id, deployment_id FROM store_generation");

export function createSqlStore(backend: Backend): Store {
  const { db } = backend;
  return {
    kind: backend.kind,
    flags: backend.flags,
    ping: () => db.ping(),
    shardGroupsUnreachable: () => db.shardGroupsUnreachable(),
    close: () => backend.close(),
    addWorkItem: (input) => backend.addWorkItem(input),
    getOrCreateServerKey: (name, candidate) => backend.getOrCreateServerKey(name, candidate),
    addWorkItems: (input) => backend.addWorkItems(input),
    schemaStatus: () => backend.schemaStatus(),
    migrate: () => backend.migrate(),
    storageSize: () => backend.storage.storageSize(),
    returnFreePages: (bounds) => backend.storage.returnFreePages(bounds),
    storeIdentity: async () => {
      const { applied } = await backend.schemaStatus();
      if (!applied.some((migration) => migration.version === GENERATION_IDS_MIGRATION)) return null;
      const row = await db.one<{ generation: number; generation_id: string | null; deployment_id: string }>(READ_STORE_IDENTITY);
      return row === undefined ? null : ({ deploymentId: row.deployment_id, generation: Number(row.generation), generationId: row.generation_id } satisfies StoreIdentity);
    },
    addFollowUp: (input) => addFollowUp(db, input),
    ...accountsStore(db),
    ...workItemsStore(db),
    ...outcomesStore(db),
    ...capacityStore(db),
    ...breakerStore(db),
    ...filingQueueStore(db),
    ...webhookSecretsStore(db),
    ...webhooksStore(db),
    ...eventsStore(db),
    ...operatorsStore(db),
    ...operatorReadsStore(db),
    ...operatorItemsStore(db),
    ...operatorActionsStore(db),
    ...erasureStore(db, backend.flags),
    ...companyErasureStore(db, backend.flags),
    ...exportStore(db),
  };
}
