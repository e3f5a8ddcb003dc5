import { CompanyBeingErasedError, createKey, listKeys, revokeKey, type CreatedKey } from "../../admin/admin.ts";
import type { ApiKeyRecord } from "../../store/store.ts";
import { CommandFailedError, requiredInteger, requiredText, type Command } from "../command.ts";

export const keysCreate: Command = {
  name: "keys create",
  usage: "keys create --company-id ID [--name N] [--json]",
  summary: "create an API key (and the company, when new); the secret is shown once",
  options: { "company-id": { type: "string" }, name: { type: "string" } },
  async run({ store, flags }) {
    const companyId = requiredInteger(flags, "company-id");
    const name = typeof flags.name === "string" ? flags.name : undefined;
    try {
      return await createKey(store, { companyId, ...(name === undefined ? {} : { name }) });
    } catch (error) {
      if (error instanceof CompanyBeingErasedError) throw new CommandFailedError(error.message);
      throw error;
    }
  },
  human: (result) => {
    const key = result as CreatedKey;
    return [
      `Created API key ${key.keyId} for company ${key.companyId}.`,
      `  apiKey: ${key.apiKey}`,
      `  secret: ${key.secret}`,
      "Store the secret now: it is not shown again (only its hash is kept).",
    ].join("\n");
  },
};

export const keysList: Command = {
  name: "keys list",
  usage: "keys list --company-id ID [--json]",
  summary: "list a company's API keys (never their secrets)",
  options: { "company-id": { type: "string" } },
  async run({ store, flags }) {
    return { keys: await listKeys(store, requiredInteger(flags, "company-id")) };
  },
  human: (result) => {
    const { keys } = result as { keys: ApiKeyRecord[] };
    if (keys.length === 0) return "No API keys.";
    return keys.map((k) => `${k.keyId}  ${k.revokedAt ? `revoked ${k.revokedAt}` : "active"}  created ${k.createdAt}${k.name ? `  ${k.name}` : ""}`).join("\n");
  },
};

export const keysRevoke: Command = {
  name: "keys revoke",
  usage: "keys revoke --key-id K [--json]",
  summary: "revoke an API key; its tokens stop working within 5 seconds",
  options: { "key-id": { type: "string" } },
  async run({ store, flags }) {
    const keyId = requiredText(flags, "key-id");
    const key = await revokeKey(store, keyId);
    if (!key) throw new CommandFailedError(`no API key ${keyId}`);
    return key;
  },
  human: (result) => {
    const key = result as ApiKeyRecord;
    return `Revoked API key ${key.keyId} of company ${key.companyId} at ${key.revokedAt}.`;
  },
};
