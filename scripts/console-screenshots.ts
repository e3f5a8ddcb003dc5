/**
 * Makes the console screenshots of the README: docs/console-overview.png and
 * docs/console-work-item.png, 1280×800, from a fresh store with a few companies' items and one
 * that failed while the authority was down. Needs Chromium at /usr/bin/chromium.
 *
 *   npx tsx scripts/console-screenshots.ts
 */
import { chromiumAvailable, CHROMIUM_PATH, signedInPage, withConsoleScene } from "../test/helpers/console-scene.ts";

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
console.log("wrote docs/console-overview.png and docs/console-work-item.png");
