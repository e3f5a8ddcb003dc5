/**
 * The Overview hides nothing (SPEC §25), on the busy morning of test/helpers/busy-morning.ts, in a
 * real Chromium at 1280×800 and 390×844: what needs a look (overdue items and retrying webhook
 * deliveries, per company, counts in red) is in view without scrolling; the Throughput chart
 * counts the failed webhook attempts; the Overdue bar is readable; the deliveries table fits its
 * box; a company filter takes a name; on a phone the header is short and company names break
 * between words. axe finds nothing serious on any page.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chromium, type Page } from "playwright-core";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { sqliteBackend } from "../helpers/backends.ts";
import { BUSY_COMPANIES, HOOKED_COMPANY, HOOKED_ITEMS, OVERDUE_ITEMS, withBusyMorning } from "../helpers/busy-morning.ts";
import { CHROMIUM_PATH, DESKTOP, fitsViewportWidth, PHONE, seriousAxeViolations, signedInPage, skipWithoutChromium, type BrowserScene } from "../helpers/console-scene.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const skip = skipWithoutChromium();
/** The console's --danger colour, which only the counts that need a look are written in. */
const DANGER = "rgb(161, 20, 31)";

async function accessible(page: Page, name: string): Promise<void> {
  const violations = await seriousAxeViolations(page);
  assert.deepEqual(violations.map((v) => `${v.id}: ${v.help}`), [], `${name}: axe`);
}

/** Words of `selector`'s cells that the browser laid out over more than one line (a name broken mid-word). */
const BROKEN_WORDS = `(selector) => [...document.querySelectorAll(selector)].flatMap((cell) => {
  const broken = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of (node.textContent ?? "").matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      if (new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1) broken.push(match[0]);
    }
  }
  return broken;
})`;

const brokenWords = (page: Page, selector: string) => page.evaluate<string[]>(`(${BROKEN_WORDS})(${JSON.stringify(selector)})`);

/** The colour each element of `selector` is drawn in. */
const colours = (page: Page, selector: string) => page.evaluate<string[]>(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((element) => getComputedStyle(element).color)`);

describe("the Overview on a busy morning", { skip, timeout: HANG_TIMEOUT_MS }, () => {
  test("overdue items and retrying deliveries in view, in red, per company; failed attempts charted; the Overdue bar readable; names and filters; 1280 and 390 px", () =>
    withBusyMorning(sqliteBackend, async ({ t }) => {
      const baseUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
      const admin = await createOperatorAccount(t.store, { email: "ops@example.com", role: "admin" });
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
      try {
        const scene: BrowserScene = { baseUrl, admin, browser };
        const hooked = BUSY_COMPANIES.find((company) => company.companyId === HOOKED_COMPANY)!;

        const page = await signedInPage(scene, DESKTOP);
        const attention = page.getByRole("region", { name: "Needs a look" });
        const lines = await attention.getByRole("listitem").allInnerTexts();
        assert.deepEqual(
          lines.map((line) => line.replace(/\s+/g, " ").trim()),
          [
            `${OVERDUE_ITEMS} items are overdue: Acme Transport 6, Acme Agri 5, Boer & Zn. Logistiek 5, De Vries Mestransport 5`,
            `${HOOKED_ITEMS} webhook deliveries are retrying: ${hooked.name} ${HOOKED_ITEMS}`,
          ],
        );
        const box = (await attention.boundingBox())!;
        assert.ok(box.y + box.height <= DESKTOP.height, `"Needs a look" ends at ${box.y + box.height} px, above the fold`);
        const counts = await colours(page, ".attention .alert-count, #companies-heading ~ .table-scroll .alert-count");
        assert.equal(counts.length, 2 + BUSY_COMPANIES.length + 1 + 4 + 1, "totals, each company's overdue and retrying count, in the box and in the table");
        assert.deepEqual(new Set(counts), new Set([DANGER]));

        const overdueLink = attention.getByRole("link", { name: /items are overdue/ });
        assert.equal(new URL(await overdueLink.getAttribute("href") ?? "", baseUrl).search, "?due=overdue&sort=deadline");

        // The Throughput chart counts each failed attempt, though no delivery has been given up yet.
        const throughput = page.getByRole("region", { name: "Throughput (24 h)" });
        assert.ok(await throughput.getByText(`Webhook attempts failed: ${HOOKED_ITEMS}`).isVisible());
        assert.ok(await throughput.getByText("Webhook deliveries given up: 0").isVisible());

        // The Overdue bar, drawn against the longest queue, is as wide as the chart (its 21 items are the most at one deadline).
        const chartWidth = (await page.locator(".deadlines-chart").boundingBox())!.width;
        const overdueBar = (await page.locator(".deadlines-chart .dl-row").first().locator("rect.dl-late").boundingBox())!;
        assert.ok(overdueBar.width >= chartWidth * 0.9, `the Overdue bar is ${overdueBar.width} of ${chartWidth} px`);
        await accessible(page, "overview at 1280 px");
        assert.ok(await fitsViewportWidth(page), "overview: no sideways scrolling");

        // Deliveries: the table fits its box; a name filters, and a name several companies start with asks which.
        await page.goto(`${baseUrl}/console/webhook-deliveries`);
        const wide = await page.locator(".table-scroll").evaluateAll((boxes) => boxes.filter((b) => b.scrollWidth > b.clientWidth).map((b) => b.scrollWidth - b.clientWidth));
        assert.deepEqual(wide, [], "the deliveries table is no wider than its box");
        await page.getByLabel("Company").fill("boer");
        await page.getByRole("button", { name: "Filter" }).click();
        await page.waitForURL(/company=boer/);
        assert.equal(await page.locator("table tbody tr").count(), HOOKED_ITEMS);
        await page.goto(`${baseUrl}/console/webhook-deliveries?company=Acme`);
        assert.match(await page.locator("main").innerText(), /“Acme” starts the names of 2 companies; choose one: Acme Transport #41, Acme Agri #42\./);
        await page.getByRole("link", { name: "Acme Agri #42" }).click();
        assert.match(await page.locator("main").innerText(), /No webhook deliveries\./);
        await accessible(page, "deliveries at 1280 px");

        const phone = await signedInPage(scene, PHONE);
        const header = (await phone.locator("header").boundingBox())!;
        assert.ok(header.height <= 140, `the header takes ${header.height} of ${PHONE.height} px`);
        const phoneBox = (await phone.getByRole("region", { name: "Needs a look" }).boundingBox())!;
        assert.ok(phoneBox.y + phoneBox.height <= PHONE.height, `"Needs a look" ends at ${phoneBox.y + phoneBox.height} px, in view on a phone`);
        assert.deepEqual(await brokenWords(phone, "#companies-heading ~ .table-scroll th.name"), [], "company names break between words");
        assert.ok(await fitsViewportWidth(phone), "overview on a phone: no sideways scrolling");
        await accessible(phone, "overview at 390 px");
      } finally {
        await browser.close();
      }
    }));
});
