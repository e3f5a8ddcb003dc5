import { createCompany, renameCompany } from "../../admin/admin.ts";
import { AlreadyExistsError } from "../../store/errors.ts";
import type { Company } from "../../store/store.ts";
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
