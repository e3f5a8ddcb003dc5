/**
 * The one implementation of the Store interface: the operations of core/, each written once
 * over the database port, plus the few a backend brings itself (the intake fast path, the
 * generated server keys, closing).
 */
import type { DatabasePort } from "../port.ts";
import type { AddWorkItemOutcome, AddWorkItemsOutcome, NewWorkItem, NewWorkItems, Store, StoreFlags } from "../store.ts";
import { accountOperations } from "./accounts.ts";
import { botOperations } from "./bot.ts";
import { breakerOperations } from "./breaker.ts";
import { capacityOperations } from "./capacity.ts";
import { addFollowUp } from "./follow-ups.ts";
import { eventOperations } from "./events.ts";
import { filingQueueOperations } from "./filing-queue.ts";
import { idempotencyOperations } from "./idempotency.ts";
import { operatorActionOperations } from "./operator-actions.ts";
import { operatorReadOperations } from "./operator-reads.ts";
import { operatorOperations } from "./operators.ts";
import { webhookSecretOperations } from "./webhook-secrets.ts";
import { webhookOperations } from "./webhooks.ts";
import { workItemOperations } from "./work-items.ts";

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
  /** Settles what is in flight, then closes the database. */
  close(): Promise<void>;
}

export function createSqlStore(backend: Backend): Store {
  const { db } = backend;
  return {
    kind: backend.kind,
    flags: backend.flags,
    ping: () => db.ping(),
    close: () => backend.close(),
    addWorkItem: (input) => backend.addWorkItem(input),
    getOrCreateServerKey: (name, candidate) => backend.getOrCreateServerKey(name, candidate),
    addWorkItems: (input) => backend.addWorkItems(input),
    addFollowUp: (input) => addFollowUp(db, input),
    ...accountOperations(db),
    ...workItemOperations(db),
    ...botOperations(db),
    ...capacityOperations(db),
    ...breakerOperations(db),
    ...filingQueueOperations(db),
    ...webhookSecretOperations(db),
    ...webhookOperations(db),
    ...eventOperations(db),
    ...idempotencyOperations(db),
    ...operatorOperations(db),
    ...operatorReadOperations(db),
    ...operatorActionOperations(db),
  };
}
