/**
 * Makes the console screenshots in docs/: an operator's morning (SPEC §16), empty, normal and
 * overloaded, at 1280×800 and on a 390 px phone (every page on the normal one, the New items by
 * deadline as "waiting"): docs/console-<morning>-<page>.png and
 * …-phone.png; the Overview of the busy morning (SPEC §25: overdue items, a receiver failing),
 * what fits a 1280×800 screen and a 390×844 phone, docs/console-busy-overview.png and …-phone.png;
 * and the Deadlines chart (SPEC §14) over a little, a normal and an overloaded queue,
 * docs/console-deadlines-<queue>.png and …-phone.png. Needs Chromium at /usr/bin/chromium.
 *
 *   npx tsx scripts/console-screenshots.ts
 */
import { chromium } from "playwright-core";
import { createOperatorAccount } from "../src/operators/accounts.ts";
import { sqliteBackend } from "../test/helpers/backends.ts";
import { withBusyMorning } from "../test/helpers/busy-morning.ts";
import { chromiumAvailable, CHROMIUM_PATH, DESKTOP, PHONE, signedInPage, withQueueScene } from "../test/helpers/console-scene.ts";
import { QUEUES } from "../test/helpers/deadline-queue.ts";
import { withMorningScene, type Morning } from "../test/helpers/morning-scene.ts";

if (!chromiumAvailable()) {
  console.error(`${CHROMIUM_PATH} is missing; install Chromium to make the screenshots`);
  process.exit(1);
}

const written: string[] = [];
const PAGES: Record<Morning, string[]> = {
  empty: ["overview"],
  normal: ["overview", "work-items", "waiting", "work-item", "webhook-deliveries", "audit"],
  overloaded: ["overview", "work-items"],
};

for (const [morning, pages] of Object.entries(PAGES) as Array<[Morning, string[]]>) {
  await withMorningScene(morning, async (scene) => {
    for (const [suffix, viewport] of [["", DESKTOP], ["-phone", PHONE]] as const) {
      const page = await signedInPage(scene, viewport);
      for (const name of pages) {
        const path = {
          overview: "/console",
          "work-items": "/console/work-items",
          waiting: "/console/work-items?status=New",
          "work-item": `/console/work-items/${(scene.overdueItem ?? scene.someItem)?.workItemId}`,
          "webhook-deliveries": "/console/webhook-deliveries",
          audit: "/console/audit",
        }[name];
        await page.goto(`${scene.baseUrl}${path}`);
        const file = `docs/console-${morning}-${name}${suffix}.png`;
        await page.screenshot({ path: file, fullPage: true });
        written.push(file);
      }
    }
  });
}

await withBusyMorning(sqliteBackend, async ({ t }) => {
  const baseUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
  const admin = await createOperatorAccount(t.store, { email: "ops@example.com", role: "admin" });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
  try {
    // What an operator sees without scrolling: the screen, not the whole page.
    for (const [suffix, viewport] of [["", DESKTOP], ["-phone", PHONE]] as const) {
      const page = await signedInPage({ baseUrl, admin, browser }, viewport);
      const path = `docs/console-busy-overview${suffix}.png`;
      await page.screenshot({ path });
      written.push(path);
    }
  } finally {
    await browser.close();
  }
});

for (const [name, shape] of Object.entries(QUEUES)) {
  await withQueueScene(shape, async (scene) => {
    for (const [suffix, viewport] of [["", undefined], ["-phone", PHONE]] as const) {
      const page = await signedInPage(scene, viewport);
      const path = `docs/console-deadlines-${name}${suffix}.png`;
      await page.getByRole("region", { name: "Deadlines" }).screenshot({ path });
      written.push(path);
    }
  });
}
console.log(`wrote ${written.join(", ")}`);
