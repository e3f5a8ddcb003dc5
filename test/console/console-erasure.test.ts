/**
 * The console shows a company erase under way and its end (SPEC §22), in Chromium: the
 * Overview's line with its phase, who asked and why, gone once it ended, and the Audit page's
 * entry company.erased with the number of items; accessible at desktop and phone width.
 * Screenshots go to a temp folder named on stderr.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { advanceCompanyErasure } from "../../src/admin/company-erasure.ts";
import { fitsViewportWidth, PHONE, seriousAxeViolations, signedInPage, skipWithoutChromium, withConsoleScene } from "../helpers/console-scene.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const skip = skipWithoutChromium();

describe("a company erase in the console [sqlite]", { timeout: HANG_TIMEOUT_MS, skip }, () => {
  test("the Overview shows it under way, the audit log its end", () =>
    withConsoleScene(async (scene) => {
      const shots = mkdtempSync(join(tmpdir(), "console-erasure-"));
      process.stderr.write(`console erasure screenshots: ${shots}\n`);
      const look = async (page: Page, name: string) => {
        assert.deepEqual((await seriousAxeViolations(page)).map((violation) => violation.id), [], `${name}: no serious accessibility violations`);
        await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
      };
      const at = new Date().toISOString();
      await scene.store.beginCompanyErasure(12, { operator: { operatorId: "op_x", email: "dpo@example.com" }, reason: "contract ended; the company asked for erasure", at });
      await scene.store.revokeCompanyKeys(12, at);

      const page = await signedInPage(scene);
      const erasures = page.locator('section[aria-labelledby="erasures-heading"]');
      await erasures.waitFor();
      assert.match(await erasures.innerText(), /Erasing company #12 since .*: its keys are revoked; cancelling its New items and waiting for its calls to the authority to end\. Asked by dpo@example\.com: contract ended; the company asked for erasure/);
      await look(page, "overview-erasing");
      const phone = await signedInPage(scene, PHONE);
      assert.ok(await fitsViewportWidth(phone), "the line fits a phone");
      await look(phone, "overview-erasing-phone");

      // Its end, as the worker or the CLI reaches it (the clock past the keys' 5 s).
      const later = () => new Date(Date.now() + 10_000);
      for (let step = await advanceCompanyErasure(scene.store, 12, { budgetMs: 10_000, clock: later }); step.kind !== "erased"; ) {
        step = await advanceCompanyErasure(scene.store, 12, { budgetMs: 10_000, clock: later });
      }
      await page.reload();
      assert.equal(await erasures.count(), 0, "no erase under way any more");
      await page.getByRole("link", { name: "Audit" }).click();
      const entry = page.locator("tbody tr").filter({ hasText: "company.erased" });
      assert.match(await entry.innerText(), /dpo@example\.com[\s\S]*company\.erased[\s\S]*company #12, erased with its 2 items[\s\S]*contract ended/);
      await look(page, "audit-erased");
    }));
});
