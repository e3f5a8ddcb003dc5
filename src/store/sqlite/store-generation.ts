/**
 * The embedded store's generation and deployment (migrations 0017 and 0020, SPEC §18 and §24).
 *
 * A generation is what the store is between two restores: a number, 0 until the first
 * `db restore`, and from then on a random id that no other generation of any store has. Each new
 * work item keeps the generation it was added in, and its idempotency key at the authority carries
 * the id (at generation 0 the key is the item's id, SPEC §5), so an item added after a restore is
 * never taken for one the authority saw before it, however often and from whatever copy the store
 * was restored.
 *
 * The deployment id is made with the store and kept in its copies: a restore takes only a copy of
 * its own deployment, unless told otherwise (restore.ts).
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";

/** The generation's number, as the value of a new work item's column. */
export const STORE_GENERATION_READ = "(SELECT generation FROM store_generation)";
/** The generation's id, as the value of a new work item's column. */
export const GENERATION_ID_READ = "(SELECT generation_id FROM store_generation)";

export const newGenerationId = () => randomBytes(8).toString("hex");
export const newDeploymentId = () => randomBytes(16).toString("hex");

export interface StoreGeneration {
  generation: number;
  generationId: string;
  deploymentId: string;
}

/**
 * The next generation, in a store no process uses (`db restore`'s copy before it is put in place),
 * with a new deployment id when `deploymentId` names one.
 */
export function raiseStoreGeneration(db: Database.Database, now: string, deploymentId?: string): StoreGeneration {
  const row = db
    .prepare(
      `UPDATE store_generation SET generation = generation + 1, generation_id = ?, deployment_id = coalesce(?, deployment_id), changed_at = ?
        RETURNING generation, generation_id AS generationId, deployment_id AS deploymentId`,
    )
    .get(newGenerationId(), deploymentId ?? null, now) as StoreGeneration | undefined;
  if (row === undefined) throw new Error("the store has no store_generation row (migration 0017)");
  return row;
}

/**
 * A copy of another deployment, restored on purpose (restore.ts): its items the authority has not
 * yet taken are keyed by the new generation from now on. At generation 0 their keys are their ids,
 * which this deployment's items had too, and the authority would answer one with the other's
 * application (SPEC §24). Returns how many.
 */
export function rekeyUnfiledItems(db: Database.Database, generationId: string): number {
  return db.prepare("UPDATE work_items SET generation_id = ? WHERE status IN ('New', 'InProgress')").run(generationId).changes;
}

/**
 * The deployment a store file belongs to; null when it cannot tell: a copy taken before
 * migration 0020, or a file that cannot be read.
 */
export function deploymentOf(file: string): string | null {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const row = db.prepare("SELECT deployment_id FROM store_generation").get() as { deployment_id: string | null } | undefined;
    return row?.deployment_id ?? null;
  } catch {
    return null;
  } finally {
    db?.close();
  }
}
