import { createCompany } from "../../admin/admin.ts";
import { AlreadyExistsError } from "../../store/errors.ts";
import type { Company } from "../../store/store.ts";
import { CommandFailedError, requiredInteger, requiredText, type Command } from "../command.ts";

export const companiesCreate: Command = {
  name: "companies create",
  usage: "companies create --name N [--company-id ID] [--json]",
  summary: "create a company (tenant)",
  options: { name: { type: "string" }, "company-id": { type: "string" } },
  async run({ store, flags }) {
    const name = requiredText(flags, "name");
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
