/** `companies export` (SPEC §22): a company's items as JSON Lines on stdout, progress on stderr. */
import { once } from "node:events";
import { CommandFailedError, requiredInteger, UsageError, type Command } from "../command.ts";

export interface ExportSummary {
  companyId: number;
  items: number;
  since: string | null;
}

/** Writes a chunk to stdout, waiting while its buffer is full; rejects once stdout is gone (a closed pipe). */
async function write(chunk: string): Promise<void> {
  if (process.stdout.destroyed) throw new CommandFailedError("stdout was closed before the export ended");
  if (process.stdout.write(chunk)) return;
  const [event] = await Promise.race([once(process.stdout, "drain").then(() => ["drain"]), once(process.stdout, "close").then(() => ["close"])]);
  if (event === "close") throw new CommandFailedError("stdout was closed before the export ended");
}

export const companiesExport: Command = {
  name: "companies export",
  usage: "companies export --company-id ID [--since DATE] [--json]",
  summary:
    "a company's items, each its view and its timeline, as JSON Lines on stdout in id order (only those added since DATE, a date or an ISO 8601 instant, with --since); constant memory; progress on stderr",
  options: { "company-id": { type: "string" }, since: { type: "string" } },
  streams: true,
  async run({ store, flags }): Promise<ExportSummary> {
    const companyId = requiredInteger(flags, "company-id");
    const { exportLines, parseSince } = await import("../../admin/company-export.ts");
    let since: string | undefined;
    if (flags.since !== undefined) {
      since = typeof flags.since === "string" ? parseSince(flags.since) : undefined;
      if (since === undefined) throw new UsageError(`--since must be a date (2026-11-28) or an ISO 8601 instant (2026-11-28T09:00:00Z), got ${JSON.stringify(flags.since)}`);
    }
    if (!(await store.getCompany(companyId))) throw new CommandFailedError(`there is no company ${companyId}`);
    // A pipe that closes (| head) ends the export with one line, not an error event nobody handles.
    process.stdout.on("error", () => undefined);
    let items = 0;
    let shownAt = Date.now();
    const onPage = (progress: { items: number; lastWorkItemId: number }) => {
      items = progress.items;
      if (Date.now() - shownAt < 1000) return;
      shownAt = Date.now();
      process.stderr.write(`export of company ${companyId}: ${items.toLocaleString("en")} items so far (up to item ${progress.lastWorkItemId})\n`);
    };
    for await (const chunk of exportLines(store, companyId, { ...(since === undefined ? {} : { since }), onPage })) await write(chunk);
    return { companyId, items, since: since ?? null };
  },
  human: (result) => {
    const { companyId, items, since } = result as ExportSummary;
    return `Exported ${items.toLocaleString("en")} items of company ${companyId}${since === null ? "" : ` added since ${since}`}.`;
  },
};
