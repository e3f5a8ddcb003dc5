import { createCompany, renameCompany } from "../../admin/admin.ts";
import { AlreadyExistsError } from "../../store/errors.ts";
import type { ErasureProgress } from "../../admin/company-erasure.ts";
import type { Company, CompanyErased } from "../../store/store.ts";
import { CommandFailedError, requiredInteger, requiredText, UsageError, type Command, type Flags } from "../command.ts";

/** What the console can show in a table cell: one line of ordinary length. */
const COMPANY_NAME_MAX_LENGTH = 200;

function companyName(flags: Flags): string {
  const name = requiredText(flags, "name").trim();
  if (name.length > COMPANY_NAME_MAX_LENGTH || /\p{Cc}/u.test(name)) throw new UsageError(`--name must be one line of at most ${COMPANY_NAME_MAX_LENGTH} characters`);
  return name;
}

export const companiesCreate: Command = {
  name: "companies create",
  usage: "companies create --name N [--company-id ID] [--json]",
  summary: "create a company (tenant)",
  options: { name: { type: "string" }, "company-id": { type: "string" } },
  async run({ store, flags }) {
    const name = companyName(flags);
    const companyId = flags["company-id"] === undefined ? undefined : requiredInteger(flags, "company-id");
    try {
      const company = await createCompany(store, { name, ...(companyId === undefined ? {} : { companyId }) });
      return { companyId: company.companyId, name: company.name };
    } catch (error) {
      if (error instanceof AlreadyExistsError) throw new CommandFailedError(`company ${companyId} already exists`);
      throw error;
    }
  },
  human: (result) => {
    const company = result as Pick<Company, "companyId" | "name">;
    return `Created company ${company.companyId} (${company.name}).`;
  },
};

export const companiesRename: Command = {
  name: "companies rename",
  usage: "companies rename --company-id ID --name N [--json]",
  summary: "give a company the name the console shows for it",
  options: { name: { type: "string" }, "company-id": { type: "string" } },
  async run({ store, flags }) {
    const companyId = requiredInteger(flags, "company-id");
    const company = await renameCompany(store, companyId, companyName(flags));
    if (!company) throw new CommandFailedError(`there is no company ${companyId}`);
    return { companyId: company.companyId, name: company.name };
  },
  human: (result) => {
    const company = result as Pick<Company, "companyId" | "name">;
    return `Company ${company.companyId} is now called ${company.name}.`;
  },
};

/** Who the audit log names for what the CLI does: whoever can run it on the servers. */
const CLI_OPERATOR = { operatorId: "cli", email: "cli" };
const REASON_MAX_LENGTH = 500;

/** A person watching a long erase on stderr: each phase, and the rows deleted, at most once a second. */
function progressOnStderr(companyId: number): (progress: ErasureProgress) => void {
  let deleted = 0;
  let cancelled = 0;
  let shownAt = 0;
  const say = (line: string) => process.stderr.write(`erase of company ${companyId}: ${line}\n`);
  const often = (line: () => string) => {
    if (Date.now() - shownAt < 1000) return;
    shownAt = Date.now();
    say(line());
  };
  return (progress) => {
    switch (progress.kind) {
      case "keysRevoked":
        return say("its keys are revoked; every process refuses them within 5 s");
      case "cancelled":
        cancelled += progress.items;
        return often(() => `${cancelled.toLocaleString("en")} New items cancelled so far`);
      case "draining":
        return often(() => {
          const done = `${cancelled.toLocaleString("en")} New items cancelled, out of the filing queue`;
          return progress.callsInFlight > 0
            ? `${done}; waiting for ${progress.callsInFlight} calls to the authority to end`
            : `${done}; waiting until ${progress.keysRefusedAt}, when no process takes its keys any more`;
        });
      case "deleting":
        return say(`its work is stopped; deleting its ${progress.items.toLocaleString("en")} items and everything else of it`);
      case "deleted":
        deleted += progress.rows;
        return often(() => `${deleted.toLocaleString("en")} rows deleted (now ${progress.table})`);
    }
  };
}

export const companiesErase: Command = {
  name: "companies erase",
  usage: "companies erase --company-id ID --confirm ID [--reason TEXT] [--json]",
  summary:
    "erase a company that leaves (SPEC §22): its keys stop working, its New items are cancelled, then every row of it goes, with one audit entry; a run again resumes one killed half-way; progress on stderr",
  options: { "company-id": { type: "string" }, confirm: { type: "string" }, reason: { type: "string" } },
  async run({ store, flags }) {
    const companyId = requiredInteger(flags, "company-id");
    if (flags.confirm !== String(companyId)) throw new UsageError(`--confirm must repeat the company id: --confirm ${companyId}`);
    const reason = typeof flags.reason === "string" ? flags.reason.trim() : "companies erase (CLI)";
    if (reason === "" || reason.length > REASON_MAX_LENGTH || /\p{Cc}/u.test(reason)) throw new UsageError(`--reason must be one line of 1 to ${REASON_MAX_LENGTH} characters`);
    const { eraseCompany } = await import("../../admin/company-erasure.ts");
    const outcome = await eraseCompany(store, companyId, { operator: CLI_OPERATOR, reason, at: new Date().toISOString() }, { onProgress: progressOnStderr(companyId) });
    if (outcome.kind === "notFound") throw new CommandFailedError(`there is no company ${companyId}`);
    return { ...outcome.erased, alreadyErased: outcome.kind === "alreadyErased" };
  },
  human: (result) => {
    const { companyId, items, erasedAt, alreadyErased } = result as CompanyErased & { alreadyErased: boolean };
    return alreadyErased
      ? `Company ${companyId} was erased already, at ${erasedAt} (${items.toLocaleString("en")} items); nothing is left of it.`
      : `Erased company ${companyId}: ${items.toLocaleString("en")} items and every other row of it are gone (audit entry company.erased).`;
  },
};
