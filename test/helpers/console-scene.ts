/**
 * A console worth looking at, for the browser test and scripts/console-screenshots.ts: a real
 * HTTP server on a fresh SQLite store, the authority simulator, an admin, and a few companies'
 * items, one of which failed because the authority was down; or, for the Deadlines chart, a
 * queue by deadline of a given shape.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { AxeResults } from "axe-core";
import { chromium, type Browser, type Page } from "playwright-core";
import type { BotCounts } from "../../src/bot/run-once.ts";
import type { Store } from "../../src/store/store.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { sqliteBackend } from "./backends.ts";
import { withBot } from "./bot-harness.ts";
import { seedDeadlineQueue, type QueueShape } from "./deadline-queue.ts";
import { bearer, createTestApp, validWorkItem } from "./test-app.ts";

export const CHROMIUM_PATH = "/usr/bin/chromium";
export const chromiumAvailable = (): boolean => existsSync(CHROMIUM_PATH);

/** A browser suite's `skip`: false with Chromium, else the reason, said loudly once on stderr. */
export function skipWithoutChromium(): string | false {
  if (chromiumAvailable()) return false;
  const reason = `${CHROMIUM_PATH} is missing: the console's browser test needs Chromium (CI installs it)`;
  process.stderr.write(`\n!!!!! ${reason}; SKIPPED !!!!!\n\n`);
  return reason;
}
export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

const AXE_PATH = fileURLToPath(import.meta.resolve("axe-core/axe.min.js"));

/** A console served over HTTP, an admin to sign in as, and a browser. */
export interface BrowserScene {
  baseUrl: string;
  admin: { email: string; password: string };
  browser: Browser;
}

export interface ConsoleScene extends BrowserScene {
  /** Failed with AUTHORITY_UNAVAILABLE: the authority was down and BOT_MAX_ATTEMPTS is 1. */
  failedItem: { workItemId: number; customerReference: string };
  /** One bot pass against the (now healthy) simulator. */
  runBot(): Promise<BotCounts>;
  /** The store the console serves. */
  store: Store;
}

export async function withConsoleScene(body: (scene: ConsoleScene) => Promise<void>): Promise<void> {
  await withBot(sqliteBackend, { BOT_MAX_ATTEMPTS: "1" }, async ({ t, sim, add, run }) => {
    const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
    const admin = await createOperatorAccount(t.store, { email: "ops@example.com", role: "admin" });

    sim.behaviour.outage = true;
    const failed = await add(validWorkItem({ customerReference: "ORDER-2026-0042" }));
    await run();
    sim.behaviour.outage = false;
    await add(validWorkItem({ customerReference: "ORDER-2026-0043", senderChamberOfCommerceNo: { sendValue: "1234567" } }));
    for (const reference of ["ORDER-2026-0044", "ORDER-2026-0045", "ORDER-2026-0046"]) await add(validWorkItem({ customerReference: reference }));
    await run();
    for (const reference of ["ORDER-2026-0047", "ORDER-2026-0048"]) await add(validWorkItem({ customerReference: reference }));
    const second = await t.tenant(12);
    for (const reference of ["PO-88121", "PO-88122"]) {
      const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(second.token), payload: validWorkItem({ customerReference: reference }) });
      assert.equal(response.statusCode, 200, response.body);
    }

    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
    try {
      await body({
        baseUrl: address,
        admin,
        failedItem: { workItemId: failed.workItemId, customerReference: "ORDER-2026-0042" },
        runBot: () => run(),
        store: t.store,
        browser,
      });
    } finally {
      await browser.close();
    }
  });
}

/** The console over a queue of this shape (test/helpers/deadline-queue.ts); its deadlines, earliest first. */
export async function withQueueScene(shape: QueueShape, body: (scene: BrowserScene & { deadlines: string[] }) => Promise<void>): Promise<void> {
  const t = await createTestApp(sqliteBackend, { AUTHORITY_MAX_RPS: "0" });
  try {
    const baseUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
    const admin = await createOperatorAccount(t.store, { email: "ops@example.com", role: "admin" });
    const deadlines = await seedDeadlineQueue(t, shape);
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
    try {
      await body({ baseUrl, admin, browser, deadlines });
    } finally {
      await browser.close();
    }
  } finally {
    await t.close();
  }
}

/** A new page of its own browser context, signed in through the form. */
export async function signedInPage(scene: BrowserScene, viewport: { width: number; height: number } = DESKTOP, options: { fakeClock?: boolean } = {}): Promise<Page> {
  const context = await scene.browser.newContext({ viewport });
  // A page whose timers the test moves on, to see the 30-second refresh without waiting for it.
  if (options.fakeClock) await context.clock.install();
  const page = await context.newPage();
  await page.goto(`${scene.baseUrl}/console`);
  assert.match(page.url(), /\/console\/login$/, "signed out, the console sends you to sign in");
  await page.getByLabel("E-mail").fill(scene.admin.email);
  await page.getByLabel("Password").fill(scene.admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${scene.baseUrl}/console`);
  return page;
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function seriousAxeViolations(page: Page): Promise<AxeResults["violations"]> {
  // Evaluated through the DevTools protocol: the console's CSP rightly refuses an injected <script>.
  await page.evaluate(readFileSync(AXE_PATH, "utf8"));
  const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
  return results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

/** True when the page needs no sideways scrolling (wide tables scroll inside their own box). */
export async function fitsViewportWidth(page: Page): Promise<boolean> {
  return (await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")) === true;
}
