import type { BotCounts } from "../../bot/run-once.ts";
import type { Command } from "../command.ts";

export const botRunOnce: Command = {
  name: "bot run-once",
  usage: "bot run-once [--json]",
  summary: "run one bot pass now: close open batches, file due items with the authority, ask about filed ones",
  options: {},
  async run({ store, config }) {
    // Imported here, not above: the bot and its authority client are a large part of the module
    // graph, which --help and every other command would otherwise load too.
    const [{ newWorkerId, openAuthority }, { createAuthorityGate }, { runBotOnce }] = await Promise.all([
      import("../../bot/authority.ts"),
      import("../../bot/authority-gate.ts"),
      import("../../bot/run-once.ts"),
    ]);
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
