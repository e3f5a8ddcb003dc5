import { rotateWebhookSecret, webhookSecret } from "../../webhooks/secrets.ts";
import { CommandFailedError, requiredInteger, type Command } from "../command.ts";

export const webhooksSecret: Command = {
  name: "webhooks secret",
  usage: "webhooks secret --company-id ID [--rotate] [--json]",
  summary: "show (or rotate) the company's webhook signing secret",
  options: { "company-id": { type: "string" }, rotate: { type: "boolean" } },
  async run({ store, flags }) {
    const companyId = requiredInteger(flags, "company-id");
    const secret = flags.rotate === true ? await rotateWebhookSecret(store, companyId) : await webhookSecret(store, companyId);
    if (secret === undefined) throw new CommandFailedError(`no company ${companyId}`);
    return { companyId, secret };
  },
  human: (result) => {
    const { companyId, secret } = result as { companyId: number; secret: string };
    return `Webhook signing secret of company ${companyId}: ${secret}`;
  },
};
