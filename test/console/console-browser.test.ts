/**
 * The console in a real Chromium (SPEC §12.3): sign in, find the failed item, read why it
 * failed, retry it with a reason, let the bot file it, see it Successful and the retry in the
 * audit log; axe-core on every page, screenshots at desktop and phone width. And the Overview's
 * Deadlines chart (§14) over an overloaded queue, on a phone and a desktop.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { DESKTOP, fitsViewportWidth, PHONE, seriousAxeViolations, signedInPage, withConsoleScene, withQueueScene, skipWithoutChromium } from "../helpers/console-scene.ts";
import { QUEUES } from "../helpers/deadline-queue.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const skip = skipWithoutChromium();

describe("console in Chromium [sqlite]", { timeout: HANG_TIMEOUT_MS, skip }, () => {
  test("sign in, find the failed item, read why, retry it, watch it succeed, see the audit entry; accessible on every page", () =>
    withConsoleScene(async (scene) => {
      const shots = mkdtempSync(join(tmpdir(), "console-shots-"));
      const checkPage = async (page: Page, name: string) => {
        assert.deepEqual(
          (await seriousAxeViolations(page)).map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(" ")).join(", ")})`),
          [],
          `${name}: no serious or critical accessibility violations`,
        );
        assert.equal(await page.locator('meta[name="viewport"]').getAttribute("content"), "width=device-width, initial-scale=1");
        await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
      };

      const signIn = await (await scene.browser.newContext()).newPage();
      await signIn.goto(`${scene.baseUrl}/console/login`);
      await checkPage(signIn, "sign-in");

      const watching = await signedInPage(scene, undefined, { fakeClock: true });
      const companyRows = (page: Page) => page.locator('#overview-live section[aria-labelledby="companies-heading"] tbody tr');
      const failedOfCompany7 = companyRows(watching).first().locator("td").nth(1);
      assert.equal(await failedOfCompany7.innerText(), "2");

      const page = await signedInPage(scene);
      await checkPage(page, "overview");
      assert.ok(await page.getByRole("heading", { name: "Companies" }).isVisible());

      await page.getByRole("link", { name: "Work items" }).click();
      await page.getByLabel("Status").selectOption("Failed");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/status=Failed/);
      await checkPage(page, "work-items");
      const rows = page.locator("tbody tr");
      assert.equal(await rows.count(), 2, "the outage's failure and the rejected item");

      await page.getByRole("link", { name: scene.failedItem.customerReference }).click();
      await page.waitForURL(`${scene.baseUrl}/console/work-items/${scene.failedItem.workItemId}`);
      const why = page.getByRole("region", { name: "Why it failed", exact: true });
      assert.match(await why.innerText(), /AUTHORITY_UNAVAILABLE/);
      await checkPage(page, "work-item");

      await page.getByLabel("Reason").fill("The authority is back up");
      await page.getByRole("button", { name: "Retry" }).click();
      await page.waitForURL(`${scene.baseUrl}/console/work-items/${scene.failedItem.workItemId}?done=retried`);
      assert.match(await page.getByRole("status").innerText(), /^Retried/, "the retry is confirmed");
      assert.match(await page.locator(".facts .badge").first().innerText(), /^New$/);

      const counts = await scene.runBot();
      assert.ok(counts.succeeded >= 1, JSON.stringify(counts));
      await page.reload();
      assert.match(await page.locator(".facts .badge").first().innerText(), /^Successful$/);
      assert.match(await page.getByRole("region", { name: "Timeline", exact: true }).innerText(), /The authority is back up/);

      await watching.clock.runFor(31_000);
      await companyRows(watching).first().locator("td").nth(1).filter({ hasText: /^1$/ }).waitFor({ timeout: HANG_TIMEOUT_MS });
      assert.match(watching.url(), /\/console$/, "refreshed in place, without a reload");

      await page.getByRole("link", { name: "Webhook deliveries" }).click();
      await checkPage(page, "webhook-deliveries");

      await page.getByRole("link", { name: "Audit" }).click();
      await checkPage(page, "audit");
      const latest = await page.locator("tbody tr").first().innerText();
      assert.match(latest, /workitem\.retry/);
      assert.match(latest, /The authority is back up/);
      assert.match(latest, /ops@example\.com/);

      const phone = await signedInPage(scene, PHONE);
      await checkPage(phone, "overview-phone");
      assert.ok(await fitsViewportWidth(phone), "the overview does not scroll sideways on a phone");
      await phone.goto(`${scene.baseUrl}/console/work-items/${scene.failedItem.workItemId}`);
      await checkPage(phone, "work-item-phone");
      assert.ok(await fitsViewportWidth(phone), "the item page does not scroll sideways on a phone");

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(`${scene.baseUrl}/console/login`);
      process.stderr.write(`console screenshots: ${shots}\n`);
    }));

  test("the Deadlines chart over an overloaded queue: named, with its table, the late part in words; fits a phone; accessible", () =>
    withQueueScene(QUEUES.overloaded, async (scene) => {
      for (const viewport of [PHONE, DESKTOP]) {
        const page = await signedInPage(scene, viewport);
        const section = page.getByRole("region", { name: "Deadlines" });
        assert.ok(await section.getByRole("img", { name: "Deadlines" }).isVisible());
        const table = section.getByRole("table", { name: /^Deadlines/ });
        assert.equal(await table.locator("tbody tr").count(), 6, "overdue and five deadlines");
        assert.match(await table.locator("tbody tr").nth(1).innerText(), /2,600/);
        assert.match(await section.locator("svg text.dl-late-text").nth(1).textContent() ?? "", /^[\d,]+ late$/);
        assert.deepEqual((await seriousAxeViolations(page)).map((violation) => `${violation.id}: ${violation.help}`), [], `${viewport.width} px: no serious or critical accessibility violations`);
        assert.ok(await fitsViewportWidth(page), `${viewport.width} px: no sideways scrolling`);
        // No bar or label runs past the chart's own width.
        const overflow = await section.locator("svg.deadlines-chart").evaluate((svg) => {
          const box = svg.getBoundingClientRect();
          return [...svg.querySelectorAll("text, rect")].filter((element) => element.getBoundingClientRect().right > box.right + 0.5).length;
        });
        assert.equal(overflow, 0, `${viewport.width} px: everything inside the chart`);
      }
    }));
});
