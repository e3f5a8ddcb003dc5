/**
 * The console at a glance (SPEC §16) in a real Chromium, on an empty and a normal morning
 * (test/helpers/morning-scene.ts), at 1280×800 and 390 px: times in CONSOLE_TZ with the UTC
 * instant as title; Overdue marks on the list, the item page and the Overview; the Throughput
 * chart and its table agree with the operator API; Last hour and Today; Find; totals and the
 * link to the batch; the last error and Stop retrying, audited; no table wider than its page,
 * the key columns visible on a phone; the favicon; work types to choose from; axe on every page.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import type { Overview } from "../../src/operators/overview.ts";
import { DESKTOP, fitsViewportWidth, PHONE, seriousAxeViolations, signedInPage, skipWithoutChromium } from "../helpers/console-scene.ts";
import { withMorningScene, type MorningScene } from "../helpers/morning-scene.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { bearer } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const skip = skipWithoutChromium();

const AMSTERDAM_CLOCK = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Amsterdam", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

async function accessible(page: Page, name: string): Promise<void> {
  const violations = await seriousAxeViolations(page);
  assert.deepEqual(violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((node) => node.target.join(" ")).join(", ")})`), [], `${name}: axe`);
}

/** At 1280 px: nothing scrolls sideways, and no table is wider than its scroll box (SPEC §16). */
async function fitsDesktop(page: Page, name: string): Promise<void> {
  assert.ok(await fitsViewportWidth(page), `${name}: no sideways scrolling of the page`);
  const wide = await page.locator(".table-scroll").evaluateAll((boxes) => boxes.filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.getAttribute("aria-label")));
  assert.deepEqual(wide, [], `${name}: every table fits its box`);
}

/** At 390 px: the given cells of the first rows end inside the screen, so no sideways scrolling is needed to read them. */
async function visibleOnPhone(page: Page, cells: string, name: string): Promise<void> {
  const width = page.viewportSize()!.width;
  const outside = await page.locator(cells).evaluateAll(
    (found, screen) => found.slice(0, 30).filter((cell) => cell.getBoundingClientRect().right > screen).map((cell) => cell.textContent),
    width,
  );
  assert.ok((await page.locator(cells).count()) > 0, `${name}: ${cells} found`);
  assert.deepEqual(outside, [], `${name}: ${cells} within 390 px`);
}

/** Every <time> has the UTC instant as datetime and title, and shows the Amsterdam wall clock. */
async function timesInAmsterdam(page: Page, name: string): Promise<void> {
  const times = await page.locator("main time").evaluateAll((elements) => elements.map((e) => ({ datetime: e.getAttribute("datetime"), title: e.getAttribute("title"), text: e.textContent })));
  assert.ok(times.length > 0, `${name}: has times`);
  for (const { datetime, title, text } of times) {
    const instant = new Date(datetime ?? "");
    assert.ok(!Number.isNaN(instant.getTime()), `${name}: datetime ${datetime}`);
    assert.equal(title, `${instant.toISOString().replace("T", " ").replace(/\.\d+Z$/, "")} UTC`, `${name}: title is the UTC instant`);
    assert.ok(text?.includes(AMSTERDAM_CLOCK.format(instant)), `${name}: "${text}" shows ${datetime} in Amsterdam`);
  }
}

describe("console at a glance in Chromium [sqlite]", { timeout: HANG_TIMEOUT_MS, skip }, () => {
  test("a normal morning: times, marks, charts, Find, totals, batch link, Stop retrying, layout, favicon, work types", () =>
    withMorningScene("normal", async (scene: MorningScene) => {
      assert.ok(scene.someItem?.applicationNumber && scene.someItem.registrationNumber && scene.overdueItem, "the morning has a filed item and an overdue one");
      const page = await signedInPage(scene, DESKTOP);
      const missing: string[] = [];
      page.on("response", (response) => {
        if (response.status() >= 400) missing.push(`${response.status()} ${response.url()}`);
      });

      // Overview: the two charts, Overdue column, Last hour and Today, the header that does not wrap inside its parentheses.
      await page.goto(`${scene.baseUrl}/console`);
      await accessible(page, "overview");
      await fitsDesktop(page, "overview");
      await timesInAmsterdam(page, "overview");
      const throughput = page.getByRole("region", { name: "Throughput (24 h)" });
      assert.ok(await throughput.getByRole("img", { name: "Throughput (24 h)" }).isVisible());
      const ops = await createTestOperator(scene.t.store, "viewer");
      const api = (await scene.t.app.inject({ url: "/api/Operator/Overview", headers: bearer(ops.token) })).json<Overview>();
      const shown = await throughput.locator("table tbody tr").evaluateAll((rows) =>
        rows.map((row) => [row.querySelector("time")?.getAttribute("datetime"), ...[...row.querySelectorAll("td")].map((cell) => Number(cell.textContent?.replace(/,/g, "")))]),
      );
      assert.deepEqual(shown, api.throughput.map((hour) => [hour.hour, hour.submitted, hour.succeeded, hour.failed, hour.deliveryAttemptsFailed, hour.deliveriesFailed]), "the chart's table says what the API says");
      assert.ok(api.throughput.slice(0, 23).some((hour) => hour.submitted > 0), "the day before this hour has filings");
      const headers = await page.locator('section[aria-labelledby="companies-heading"] thead th').allInnerTexts();
      assert.deepEqual(headers.slice(0, 4).map((text) => text.replace(/\s+/g, " ")), ["Company", "Overdue", "Failed", "Failed (24 h)"]);
      const parenthesisLines = await page.locator('section[aria-labelledby="companies-heading"] thead th').nth(3).evaluate((th) => {
        const text = th.firstChild!;
        const range = th.ownerDocument.createRange();
        const start = text.textContent!.indexOf("(");
        range.setStart(text, start);
        range.setEnd(text, text.textContent!.length);
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      });
      assert.equal(parenthesisLines, 1, "(24 h) stays on one line");
      const overdueColumn = await page.locator('section[aria-labelledby="companies-heading"] tbody tr td:nth-of-type(1)').allInnerTexts();
      assert.equal(overdueColumn.reduce((sum, text) => sum + Number(text.replace(/,/g, "")), 0), api.deadlines.overdue, "the Overdue column adds up to the overdue items");
      assert.ok(api.deadlines.overdue > 0);
      const bot = await page.getByRole("region", { name: "Bot" }).innerText();
      assert.match(bot, /Last hour\s+[\d,]+ submitted, [\d,]+ succeeded, [\d,]+ failed/);
      assert.match(bot, /Today\s+[\d,]+ submitted, [\d,]+ succeeded, [\d,]+ failed/);
      assert.deepEqual(await page.getByLabel("Work type").locator("option").allInnerTexts(), ["AuthorityRvdm"], "Pause offers the known work types");

      // The list: totals, the Overdue filter and marks; the item page: its mark and its batch.
      await page.goto(`${scene.baseUrl}/console/work-items?due=overdue`);
      await accessible(page, "work items, overdue");
      await fitsDesktop(page, "work items");
      assert.equal(await page.locator("#items-total").innerText(), `${api.deadlines.overdue} items`);
      const marks = await page.locator("tbody td.status").allInnerTexts();
      assert.ok(marks.length === api.deadlines.overdue && marks.every((text) => /New\s*Overdue/.test(text)), marks.join(" | "));
      await page.goto(`${scene.baseUrl}/console/work-items/${scene.overdueItem.workItemId}`);
      await accessible(page, "overdue item");
      await timesInAmsterdam(page, "item page");
      assert.match(await page.locator(".facts").innerText(), /Deadline\s+.+Overdue/);
      await page.locator(".facts").getByRole("link").first().click();
      await page.waitForURL(/workBatchId=\d+/);
      assert.match(await page.locator("#items-total").innerText(), /^[\d,]+ items?$/);
      assert.ok(await page.locator(`a[href="/console/work-items/${scene.overdueItem.workItemId}"]`).count() === 1 || (await page.getByRole("link", { name: /Older items/ }).count()) === 1, "the item is in its batch's list");

      // Find, from the header of any page.
      for (const text of [String(scene.someItem.workItemId), scene.someItem.applicationNumber, scene.someItem.registrationNumber]) {
        await page.getByLabel("Find").fill(text);
        await page.getByLabel("Find").press("Enter");
        await page.waitForURL(`${scene.baseUrl}/console/work-items/${scene.someItem.workItemId}`);
      }
      const nothing = page.waitForResponse((response) => response.url().includes("/console/find"));
      await page.getByLabel("Find").fill("RVDM-NO-SUCH-NUMBER");
      await page.getByLabel("Find").press("Enter");
      assert.equal((await nothing).status(), 404);
      assert.equal(await page.getByRole("heading", { level: 1 }).innerText(), "Nothing found");
      await accessible(page, "nothing found");
      missing.length = 0;

      // Deliveries: the last error, Stop retrying with a reason, the audit entry.
      await page.goto(`${scene.baseUrl}/console/webhook-deliveries`);
      await accessible(page, "deliveries");
      await fitsDesktop(page, "deliveries");
      await timesInAmsterdam(page, "deliveries");
      const pendingRow = page.locator("tbody tr", { has: page.getByRole("button", { name: "Stop retrying" }) }).first();
      assert.match(await pendingRow.innerText(), /does not resolve \(ENOTFOUND\)/, "the last error is on the list");
      assert.equal((await pendingRow.locator("td").first().innerText()).trim(), "Retrying", "a pending delivery whose last attempt failed");
      assert.match(await pendingRow.locator("td").nth(3).innerText(), /Acme Transport #3/, "the company by its name");
      const deliveryId = (await pendingRow.locator("td").nth(2).innerText()).trim();
      await pendingRow.getByLabel("Reason").fill("the customer's host is gone");
      await pendingRow.getByRole("button", { name: "Stop retrying" }).click();
      await page.waitForURL(/\/console\/webhook-deliveries\?.*done=stopped/);
      assert.match(await page.getByRole("status").innerText(), new RegExp(`Delivery ${deliveryId} is stopped`), "the stop is confirmed");
      const stoppedRow = page.locator("tbody tr", { has: page.locator("td:nth-of-type(3)", { hasText: new RegExp(`^${deliveryId}$`) }) });
      assert.match(await stoppedRow.locator("td").first().innerText(), /failed/);
      assert.equal(await stoppedRow.getByRole("button", { name: "Stop retrying" }).count(), 0);
      await page.getByRole("link", { name: "Audit" }).click();
      const latest = await page.locator("tbody tr").first().innerText();
      assert.match(latest, new RegExp(`delivery\\.stop[\\s\\S]*delivery ${deliveryId}[\\s\\S]*the customer's host is gone`));
      await accessible(page, "audit");
      await timesInAmsterdam(page, "audit");

      assert.deepEqual(missing, [], "no page asked for something missing (the favicon included)");
      const favicon = await page.request.get(`${scene.baseUrl}/favicon.ico`);
      assert.equal(favicon.status(), 200);
      assert.equal(favicon.headers()["content-type"], "image/x-icon");

      // A phone: no sideways scrolling of the page, and each row's key fields in view.
      const phone = await signedInPage(scene, PHONE);
      await accessible(phone, "overview, phone");
      assert.ok(await fitsViewportWidth(phone), "overview: no sideways scrolling on a phone");
      const companies = 'section[aria-labelledby="companies-heading"] tbody tr';
      for (const cells of [`${companies} th`, `${companies} td:nth-of-type(1)`, `${companies} td:nth-of-type(2)`]) await visibleOnPhone(phone, cells, "companies");
      const charts = await phone.locator("svg.deadlines-chart, svg.throughput-chart").evaluateAll((svgs, screen) => svgs.map((svg) => svg.getBoundingClientRect().right <= screen), PHONE.width);
      assert.deepEqual(charts, [true, true], "both charts fit the phone");
      await phone.goto(`${scene.baseUrl}/console/work-items`);
      assert.ok(await fitsViewportWidth(phone), "work items: no sideways scrolling on a phone");
      for (const cells of ["tbody td.reference", "tbody td.status", "tbody td.when"]) await visibleOnPhone(phone, cells, "work items");
      await phone.goto(`${scene.baseUrl}/console/webhook-deliveries`);
      await accessible(phone, "deliveries, phone");
      assert.ok(await fitsViewportWidth(phone), "deliveries: no sideways scrolling on a phone");
      for (const cells of ["tbody td:nth-of-type(1)", "tbody td:nth-of-type(2)"]) await visibleOnPhone(phone, cells, "deliveries");
      await phone.goto(`${scene.baseUrl}/console/work-items/${scene.overdueItem.workItemId}`);
      await accessible(phone, "item, phone");
      assert.ok(await fitsViewportWidth(phone), "item page: no sideways scrolling on a phone");
    }));

  test("an empty store: every page says so, fits both sizes and passes axe; the throughput is 24 empty hours", () =>
    withMorningScene("empty", async (scene) => {
      for (const viewport of [DESKTOP, PHONE]) {
        const page = await signedInPage(scene, viewport);
        for (const path of ["/console", "/console/work-items", "/console/webhook-deliveries", "/console/audit"]) {
          await page.goto(`${scene.baseUrl}${path}`);
          await accessible(page, `${path} at ${viewport.width} px`);
          assert.ok(await fitsViewportWidth(page), `${path} at ${viewport.width} px: no sideways scrolling`);
        }
        await page.goto(`${scene.baseUrl}/console/work-items`);
        assert.equal(await page.locator("#items-total").innerText(), "No work items match.");
        await page.goto(`${scene.baseUrl}/console`);
        const rows = await page.locator("#throughput-table tbody tr").allInnerTexts();
        assert.equal(rows.length, 24);
        assert.ok(rows.every((row) => /(\t0){4}$/.test(row)), rows[0]);
        assert.match(await page.getByRole("region", { name: "Bot" }).innerText(), /Last hour\s+0 submitted, 0 succeeded, 0 failed/);
      }
    }));
});
