/**
 * Makes the console screenshots of the README: docs/console-overview.png and
 * docs/console-work-item.png, 1280×800, from a fresh store with a few companies' items and one
 * that failed while the authority was down; and the Deadlines chart (SPEC §14) over a little, a
 * normal and an overloaded queue, docs/console-deadlines-<queue>.png at 1280 px wide and
 * docs/console-deadlines-<queue>-phone.png at 390 px. Needs Chromium at /usr/bin/chromium.
 *
 *   npx tsx scripts/console-screenshots.ts
 */
import { chromiumAvailable, CHROMIUM_PATH, PHONE, signedInPage, withConsoleScene, withQueueScene } from "../test/helpers/console-scene.ts";
import { QUEUES } from "../test/helpers/deadline-queue.ts";

if (!chromiumAvailable()) {
  console.error(`${CHROMIUM_PATH} is missing; install Chromium to make the screenshots`);
  process.exit(1);
}

await withConsoleScene(async (scene) => {
  const page = await signedInPage(scene);
  await page.screenshot({ path: "docs/console-overview.png" });
  await page.goto(`${scene.baseUrl}/console/work-items/${scene.failedItem.workItemId}`);
  await page.screenshot({ path: "docs/console-work-item.png" });
});
const written = ["docs/console-overview.png", "docs/console-work-item.png"];

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
