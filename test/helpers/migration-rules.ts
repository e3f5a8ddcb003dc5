/**
 * The expand-only rule of rolling upgrades (SPEC §18): a migration of a release only adds, so the
 * processes of the release before keep working against the new schema. Refused, unless the file
 * marks itself as a contract step with its reason (a line `-- contract: <why>`):
 * - dropping or renaming a table or a column;
 * - a column that must not be NULL (added without a default, or set NOT NULL): the older release
 *   does not write it;
 * - on PostgreSQL, an index built on a table this migration did not create, without
 *   CONCURRENTLY: it blocks writes while it builds.
 *
 * The migrator runs a migration that builds an index CONCURRENTLY outside its transaction
 * (src/store/postgres/migrate.ts).
 *
 * A reader of the statements (citus-rules.ts's splitter), not a SQL parser.
 */
import { statementsOf } from "./citus-rules.ts";

export type ExpandRule = "drop" | "rename" | "not null without default" | "blocking index";

export interface ExpandViolation {
  rule: ExpandRule;
  statement: string;
}

const NAME = String.raw`(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(?:ONLY\s+)?(?:"?\w+"?\.)?"?(\w+)"?`;

/** The reason a migration gives for being a contract step, if it is one. */
export function contractReason(sql: string): string | undefined {
  return /^--\s*contract:\s*(\S.*)$/im.exec(sql)?.[1]?.trim();
}

export function expandViolations(sql: string, backend: "postgres" | "sqlite"): ExpandViolation[] {
  const violations: ExpandViolation[] = [];
  const created = new Set<string>();
  for (const statement of statementsOf(sql)) {
    const flag = (rule: ExpandRule) => violations.push({ rule, statement });
    const table = new RegExp(String.raw`^CREATE\s+(?:UNLOGGED\s+|TEMP(?:ORARY)?\s+)?TABLE\s+${NAME}`, "i").exec(statement);
    if (table) {
      created.add(table[1]!.toLowerCase());
      continue;
    }
    if (/^DROP\s+TABLE\b/i.test(statement)) {
      flag("drop");
      continue;
    }
    const index = new RegExp(String.raw`^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(?:\S+\s+)?ON\s+${NAME}`, "i").exec(statement);
    if (index) {
      if (backend === "postgres" && index[1] === undefined && !created.has(index[2]!.toLowerCase())) flag("blocking index");
      continue;
    }
    const altered = new RegExp(String.raw`^ALTER\s+TABLE\s+${NAME}\s+([\s\S]*)$`, "i").exec(statement);
    if (!altered) continue;
    const fresh = created.has(altered[1]!.toLowerCase());
    for (const action of altered[2]!.split(/,(?![^(]*\))/)) {
      const part = action.trim();
      if (/^RENAME\b/i.test(part)) flag("rename");
      else if (/^DROP\s+(?:COLUMN\s+)?(?!CONSTRAINT\b|DEFAULT\b|NOT\s+NULL\b)/i.test(part)) flag("drop");
      else if (!fresh && /^ADD\s+(?:COLUMN\s+)?(?!CONSTRAINT\b|PRIMARY\b|UNIQUE\b|CHECK\b|FOREIGN\b)/i.test(part) && /\bNOT\s+NULL\b/i.test(part) && !/\bDEFAULT\b/i.test(part)) {
        flag("not null without default");
      } else if (!fresh && /^ALTER\s+(?:COLUMN\s+)?\S+\s+SET\s+NOT\s+NULL\b/i.test(part)) flag("not null without default");
    }
  }
  return violations;
}
