import { newWorkerId, openAuthority } from "../../bot/authority.ts";
import { createAuthorityGate } from "../../bot/authority-gate.ts";
import { runBotOnce, type BotCounts } from "../../bot/run-once.ts";
import type { Command } from "../command.ts";

export const botRunOnce: Command = {
  name: "bot run-once",
  usage: "bot run-once [--json]",
  summary: "run one bot pass now: close open batches, file due items with the authority, ask about filed ones",
  options: {},
  async run({ store, config }) {
    const authority = await openAuthority(config);
    const owner = newWorkerId();
    try {
      return await runBotOnce({ store, gate: createAuthorityGate({ store, adapter: authority.adapter, config, owner }), config, owner });
    } finally {
      await authority.close();
    }
  },
  human: (result) => {
    const { batches, submitted, succeeded, failed, retried } = result as BotCounts;
    return `Bot run: ${batches} batch${batches === 1 ? "" : "es"}; ${submitted} submitted, ${succeeded} succeeded, ${failed} failed, ${retried} to retry.`;
  },
};
