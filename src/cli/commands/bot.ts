import { newWorkerId, openAuthority } from "../../bot/authority.ts";
import { runBotOnce, type BotCounts } from "../../bot/run-once.ts";
import type { Command } from "../command.ts";

export const botRunOnce: Command = {
  name: "bot run-once",
  usage: "bot run-once [--json]",
  summary: "run one bot pass now: close open batches, file due items with the authority",
  options: {},
  async run({ store, config }) {
    const authority = await openAuthority(config);
    try {
      return await runBotOnce({ store, adapter: authority.adapter, config, owner: newWorkerId() });
    } finally {
      await authority.close();
    }
  },
  human: (result) => {
    const { batches, succeeded, failed, retried } = result as BotCounts;
    return `Bot run: ${batches} batch${batches === 1 ? "" : "es"}; ${succeeded} succeeded, ${failed} failed, ${retried} to retry.`;
  },
};
