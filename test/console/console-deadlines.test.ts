/**
 * The Overview's "Deadlines" chart (SPEC §14) on both stores: an SVG named Deadlines with a bar
 * per coming deadline and one for the overdue items, and a table with the same numbers as the
 * operator API; what misses its deadline at the last hour's rate is said in words; everything
 * escaped, and no inline style (the CSP forbids it).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import type { Overview } from "../../src/operators/overview.ts";
import { availableBackends } from "../helpers/backends.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { seedDeadlineQueue, type QueueShape } from "../helpers/deadline-queue.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { bearer, createTestApp } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** More due within the hour than six an hour can file. */
const SHAPE: QueueShape = { filedLastHour: 6, overdue: 2, deadlines: [{ inHours: 1, items: 30, companies: 3 }, { inHours: 26, items: 4, companies: 2 }] };

/** The chart's table: per row the deadline (an instant, or "Overdue") and its four numbers, as shown. */
function tableRows(body: string): string[][] {
  const table = /<table id="deadlines-table">([\s\S]*?)<\/table>/.exec(body)?.[1];
  assert.ok(table, "the chart has its table");
  assert.match(table, /<caption>Deadlines: [^<]+<\/caption>/);
  return [...table.matchAll(/<tr>\s*<th scope="row">([\s\S]*?)<\/th>([\s\S]*?)<\/tr>/g)].map(([, head, cells]) => [
    /datetime="([^"]+)"/.exec(head!)?.[1] ?? head!,
    ...[...cells!.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((cell) => cell[1]!),
  ]);
}

for (const backend of await availableBackends()) {
  describe(`console Deadlines chart [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("a bar per deadline and one for overdue, against what the bot can file in time; its table says what the API says", async () => {
      const t = await createTestApp(backend, { AUTHORITY_MAX_RPS: "0" });
      try {
        const admin = await createOperatorAccount(t.store, { email: "admin@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);
        assert.match((await client.get("/console")).body, /<h2 id="deadlines-heading">Deadlines<\/h2>\s*<p>No item is waiting to be filed\.<\/p>/);

        await seedDeadlineQueue(t, SHAPE);
        const ops = await createTestOperator(t.store, "viewer");
        const api = (await t.app.inject({ url: "/api/Operator/Overview", headers: bearer(ops.token) })).json<Overview>();
        const { body } = await client.get("/console");

        assert.match(body, /<section aria-labelledby="deadlines-heading"><h2 id="deadlines-heading">Deadlines<\/h2>/);
        assert.match(body, /<svg role="img" aria-labelledby="deadlines-svg-title"[^>]*>\s*<title id="deadlines-svg-title">Deadlines<\/title>/);
        assert.equal(body.match(/<g class="dl-row">/g)?.length, 3, "overdue and the two coming deadlines");

        const rows = tableRows(body);
        assert.deepEqual(
          rows.map(([deadline, waiting, companies]) => [deadline, waiting, companies]),
          [["Overdue", "2", "—"], ...api.deadlines.next.map((d) => [d.deadlineAt, String(d.unsubmitted), String(d.companies)])],
        );
        assert.deepEqual(api.deadlines.next.map((d) => [d.unsubmitted, d.companies]), [[30, 3], [4, 2]]);
        assert.equal(api.bot.submittedLastHour, 6);
        assert.deepEqual(rows[0]!.slice(3), ["0", "2"], "overdue: nothing more to file in time, all late");
        // Six an hour, under an hour to go: at most six of the thirty make it, and the chart says how many do not.
        const [canFile, late] = rows[1]!.slice(3).map(Number);
        assert.ok(canFile! <= 6 && late === 30 - canFile!, rows[1]!.join(" "));
        assert.match(body, new RegExp(`<text [^>]*class="dl-late-text">${late} late</text>`));
        assert.match(body, /class="dl-late"/, "the late part of a bar is drawn in its own pattern");
        const [laterCanFile, laterLate] = rows[2]!.slice(3).map(Number);
        assert.ok(laterCanFile! > 4 && laterLate === 0, `the later deadline has room to spare: ${rows[2]!.join(" ")}`);
        assert.match(body, new RegExp(`<strong><a href="/console/work-items\\?status=New&amp;sort=deadline">${late} more will be late</a></strong>`), "it leads to the waiting items by deadline");

        assert.match(body, /Van Dijk &lt;Trucking&gt;/, "names are escaped");
        assert.doesNotMatch(body, /<Trucking>|\sstyle=/, "nothing unescaped, no inline style");
        const live = await client.get("/console/overview/live");
        assert.deepEqual(tableRows(live.body).map((row) => row.slice(0, 3)), rows.map((row) => row.slice(0, 3)), "the refreshed part has the chart too");
      } finally {
        await t.close();
      }
    });

    test("with nothing filed in the last hour there is no rate to go by: the bars are not split, the table says unknown", async () => {
      const t = await createTestApp(backend);
      try {
        const admin = await createOperatorAccount(t.store, { email: "admin@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);
        await seedDeadlineQueue(t, { filedLastHour: 0, overdue: 1, deadlines: [{ inHours: 5, items: 2, companies: 1 }] });
        const { body } = await client.get("/console");
        assert.match(body, /<strong><a href="\/console\/work-items\?due=overdue&amp;sort=deadline">1 item has missed its deadline<\/a>\.<\/strong> The bot filed nothing in the last hour, so there is no rate/);
        assert.deepEqual(tableRows(body).map((row) => row.slice(1)), [["1", "—", "0", "1"], ["2", "1", "unknown", "unknown"]]);
        assert.equal(body.match(/class="dl-late"/g)?.length, 2, "the overdue bar and its legend key only");
        assert.doesNotMatch(body, /class="dl-room"/, "no room drawn without a rate");
      } finally {
        await t.close();
      }
    });
  });
}
