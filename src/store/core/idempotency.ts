/** Idempotency keys past their retention (SPEC §4: 24 h) are deleted by the worker's sweep (SPEC §11.5). */
import type { DatabasePort } from "../port.ts";
import type { Store } from "../store.ts";
import { SQL } from "./sql.ts";

type IdempotencyPart = Pick<Store, "companiesWithExpiredIdempotencyKeys" | "deleteExpiredIdempotencyKeys">;

export function idempotencyStore(db: DatabasePort): IdempotencyPart {
  return {
    async companiesWithExpiredIdempotencyKeys({ createdBefore, limit }) {
      const rows = await db.all<{ company_id: number | string }>(SQL.companiesWithExpiredIdempotencyKeys, [createdBefore, limit]);
      return rows.map((row) => Number(row.company_id));
    },

    deleteExpiredIdempotencyKeys({ companyId, createdBefore, limit }) {
      return db.run(SQL.deleteExpiredIdempotencyKeys, [companyId, createdBefore, limit]);
    },
  };
}
