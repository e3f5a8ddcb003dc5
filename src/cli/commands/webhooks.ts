import { createWebhookSecrets } from "../../webhooks/secrets.ts";
import { CommandFailedError, requiredInteger, UsageError, type Command } from "../command.ts";

interface SecretResult {
  companyId: number;
  secret: string;
  /** What a person is told besides the secret; not enumerable, so not in the --json document. */
  readonly note?: string;
}

export const webhooksSecret: Command = {
  name: "webhooks secret",
  usage: "webhooks secret --company-id ID [--rotate | --revoke-previous] [--json]",
  summary: "show the company's webhook signing secret; rotate it (the old one signs too for a while), or end that overlap",
  options: { "company-id": { type: "string" }, rotate: { type: "boolean" }, "revoke-previous": { type: "boolean" } },
  async run({ store, config, flags }): Promise<SecretResult> {
    const companyId = requiredInteger(flags, "company-id");
    if (flags.rotate === true && flags["revoke-previous"] === true) throw new UsageError("--rotate and --revoke-previous do not go together");
    const secrets = createWebhookSecrets(store, config);
    let secret: string | undefined;
    let note = "";
    if (flags.rotate === true) {
      const rotated = await secrets.rotate(companyId, new Date());
      secret = rotated?.secret;
      note = rotated?.previousValidUntil
        ? `\nThe previous secret keeps signing too until ${rotated.previousValidUntil} (every delivery carries both signatures); end that early with --revoke-previous.`
        : "";
    } else if (flags["revoke-previous"] === true) {
      secret = await secrets.revokePrevious(companyId);
      note = "\nThe previous secret no longer signs.";
    } else {
      secret = await secrets.current(companyId);
    }
    if (secret === undefined) throw new CommandFailedError(`no company ${companyId}`);
    return Object.defineProperty({ companyId, secret }, "note", { value: note, enumerable: false });
  },
  human: (result) => {
    const { companyId, secret, note = "" } = result as SecretResult;
    return `Webhook signing secret of company ${companyId}: ${secret}${note}`;
  },
};
