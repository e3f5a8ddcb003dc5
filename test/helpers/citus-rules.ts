/**
 * Reads migration SQL for constructs Citus refuses on a distributed schema (docs/scaling.md §3):
 * - a trigger on any table but the coordinator's own (Citus refuses them on distributed and
 *   reference tables);
 * - on a tenant table, a primary key or unique constraint/index without company_id, or a
 *   nullable company_id;
 * - an identity (or serial) column added to an existing table.
 * A tenant table is one TABLE_PLACEMENTS distributes, or a new table with a company_id column.
 *
 * A reader of the statements, not a SQL parser: comments and dollar-quoted bodies are dropped
 * first, then each statement is matched on its own.
 */
import { TABLE_PLACEMENTS } from "../../src/store/postgres/distribution.ts";

export interface Violation {
  rule: "trigger" | "key without company_id" | "nullable company_id" | "identity added";
  table: string;
  statement: string;
}

const TENANT_TABLES = new Set(TABLE_PLACEMENTS.filter((p) => p.role === "distributed").map((p) => p.table));
const CITUS_TABLES = new Set(TABLE_PLACEMENTS.filter((p) => p.role !== "local").map((p) => p.table));
const LOCAL_TABLES = new Set(TABLE_PLACEMENTS.filter((p) => p.role === "local").map((p) => p.table));

const NAME = String.raw`(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(?:ONLY\s+)?(?:"?\w+"?\.)?"?(\w+)"?`;

export function statementsOf(sql: string): string[] {
  return sql
    .replace(/\$(\w*)\$[\s\S]*?\$\1\$/g, "$$body$$")
    .replace(/--[^\n]*/g, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split(";")
    .map((statement) => statement.replace(/\s+/g, " ").trim())
    .filter((statement) => statement !== "");
}

/** The comma-separated parts of a parenthesised list, split at its own level only. */
function topLevelParts(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of list) {
    if (char === "(") depth++;
    if (char === ")") depth--;
    if (char === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else current += char;
  }
  if (current.trim() !== "") parts.push(current.trim());
  return parts;
}

/** The text between the parenthesis at `open` and its match. */
function parenthesised(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    if (text[i] === ")" && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

const columnsOf = (list: string) => list.split(",").map((column) => column.trim().replace(/"/g, "").toLowerCase());
const KEY_COLUMNS = /(?:PRIMARY\s+KEY|UNIQUE)\s*\(([^)]*)\)/i;

export function citusViolations(sql: string): Violation[] {
  const violations: Violation[] = [];
  const flag = (rule: Violation["rule"], table: string, statement: string) => violations.push({ rule, table, statement });
  for (const statement of statementsOf(sql)) {
    const trigger = new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+\S+\s+[\s\S]*?\bON\s+${NAME}`, "i").exec(statement);
    if (trigger) {
      const table = trigger[1]!.toLowerCase();
      if (!LOCAL_TABLES.has(table)) flag("trigger", table, statement);
      continue;
    }
    const created = new RegExp(String.raw`^CREATE\s+(?:UNLOGGED\s+)?TABLE\s+${NAME}\s*\(`, "i").exec(statement);
    if (created) {
      const table = created[1]!.toLowerCase();
      const parts = topLevelParts(parenthesised(statement, created[0].length - 1));
      const companyColumn = parts.find((part) => /^"?company_id"?\s/i.test(part));
      const tenant = TENANT_TABLES.has(table) || (companyColumn !== undefined && !CITUS_TABLES.has(table));
      if (!tenant) continue;
      if (!companyColumn || !/NOT\s+NULL|PRIMARY\s+KEY/i.test(companyColumn)) flag("nullable company_id", table, statement);
      for (const part of parts) {
        const tableKey = KEY_COLUMNS.exec(part);
        const inlineKey = /^"?(\w+)"?\s[\s\S]*\b(?:PRIMARY\s+KEY|UNIQUE)\b/i.exec(part);
        if (tableKey && /^(?:CONSTRAINT\s+\S+\s+)?(?:PRIMARY\s+KEY|UNIQUE)/i.test(part)) {
          if (!columnsOf(tableKey[1]!).includes("company_id")) flag("key without company_id", table, statement);
        } else if (inlineKey && inlineKey[1]!.toLowerCase() !== "company_id") {
          flag("key without company_id", table, statement);
        }
      }
      continue;
    }
    const uniqueIndex = new RegExp(String.raw`^CREATE\s+UNIQUE\s+INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+ON\s+${NAME}\s*(?:USING\s+\w+\s*)?\(`, "i").exec(statement);
    if (uniqueIndex) {
      const table = uniqueIndex[1]!.toLowerCase();
      if (TENANT_TABLES.has(table) && !columnsOf(parenthesised(statement, uniqueIndex[0].length - 1)).includes("company_id")) {
        flag("key without company_id", table, statement);
      }
      continue;
    }
    const altered = new RegExp(String.raw`^ALTER\s+TABLE\s+${NAME}\s+([\s\S]*)$`, "i").exec(statement);
    if (altered) {
      const table = altered[1]!.toLowerCase();
      for (const action of topLevelParts(altered[2]!)) {
        const addsIdentity = /\bADD\s+GENERATED\b[\s\S]*\bAS\s+IDENTITY\b/i.test(action);
        const addsIdentityColumn = /^ADD\b/i.test(action) && /\bAS\s+IDENTITY\b|\b(?:big|small)?serial\b/i.test(action);
        if (addsIdentity || addsIdentityColumn) flag("identity added", table, statement);
        const key = KEY_COLUMNS.exec(action);
        if (TENANT_TABLES.has(table) && /^ADD\b/i.test(action) && key && !columnsOf(key[1]!).includes("company_id")) {
          flag("key without company_id", table, statement);
        }
        if (TENANT_TABLES.has(table) && /^ALTER\s+(?:COLUMN\s+)?"?company_id"?\s+DROP\s+NOT\s+NULL/i.test(action)) flag("nullable company_id", table, statement);
      }
    }
  }
  return violations;
}
