/**
 * The store's size and its free space (SPEC §22: space comes back after a sweep or an erase).
 * Not a store area of types/ and core/: each backend measures and frees its own (sqlite/free-pages.ts,
 * postgres/postgres-store.ts), with no statement in common.
 *
 * The embedded store is one file of pages: a delete frees pages into the file's free list, and
 * in `auto_vacuum = INCREMENTAL` mode they can be handed back to the file system a few at a
 * time, each chunk a short write transaction, so intake never waits long on it. PostgreSQL's
 * autovacuum makes the space of deleted rows reusable on its own; it keeps the files' size.
 */

/** How the embedded store's file gives free pages back (SQLite's `PRAGMA auto_vacuum`). */
export type AutoVacuumMode = "none" | "full" | "incremental";

export type StorageSize =
  | {
      kind: "sqlite";
      /** page_count × page_size: the database as SQLite sees it (the WAL's pages included). */
      bytes: number;
      pageSize: number;
      pages: number;
      /** Pages in the free list: freed by deletes, not yet given back to the file system. */
      freePages: number;
      freeBytes: number;
      /** The size of the file itself, which shrinks once a checkpoint writes a vacuum's pages back. */
      fileBytes: number;
      autoVacuum: AutoVacuumMode;
    }
  | {
      kind: "postgres";
      /** pg_database_size of the whole database (other schemas and applications included). */
      databaseBytes: number;
      /** The schema the store lives in (the connection's search_path). */
      schema: string;
      /** Every table of the schema with its indexes and TOAST (pg_total_relation_size). */
      schemaBytes: number;
    };

/** The store's size and free space (SPEC §22). */
export interface StorageStore {
  /** How big the store is and how much of it is free: `db status`. */
  storageSize(): Promise<StorageSize>;
  /**
   * Hands up to `atMost` free pages back to the file system in one short write transaction
   * (SQLite in incremental mode), once at least `atLeast` are free, after a step that deleted
   * rows; resolves to how many it gave back. 0 where there is nothing to do: fewer free pages, a
   * store in another mode, or PostgreSQL, whose autovacuum makes deleted rows' space reusable by
   * itself.
   */
  returnFreePages(bounds: { atLeast: number; atMost: number }): Promise<number>;
}
