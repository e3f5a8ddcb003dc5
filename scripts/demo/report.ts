/** What the demo prints: steps, a progress line while it waits, and the outcome table. */
import { registrationOf } from "../../src/domain/views.ts";
import type { WorkItemView } from "../../src/client/index.ts";
import type { ReceivedWebhook } from "./receiver.ts";

const tty = process.stdout.isTTY === true;
const paint = (code: number) => (text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
export const bold = paint(1);
export const dim = paint(2);
const green = paint(32);
const red = paint(31);

export function step(text: string): void {
  process.stdout.write(`${bold("▸")} ${text}\n`);
}

export function detail(text: string): void {
  process.stdout.write(`  ${dim(text)}\n`);
}

/**
 * One progress line: rewritten in place on a terminal; elsewhere (CI, a pipe) printed only when
 * it changes, so logs stay short.
 */
export function createProgress(): { update(text: string): void; done(): void } {
  let last = "";
  let shownOnTty = false;
  return {
    update(text) {
      if (tty) {
        process.stdout.write(`\r\u001b[2K  ${text}`);
        shownOnTty = true;
      } else if (text.replace(/\d+ s\b/, "") !== last.replace(/\d+ s\b/, "")) {
        process.stdout.write(`  ${text}\n`);
      }
      last = text;
    },
    done() {
      if (shownOnTty) process.stdout.write("\n");
    },
  };
}

export function bar(done: number, total: number, width = 20): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${"·".repeat(width - filled)}]`;
}

function outcomeOf(item: WorkItemView): string {
  const registration = registrationOf(item);
  if (registration) return registration.registrationNumber;
  if (item.error) {
    const reasons = item.error.details.map((reason) => `${reason.field}: ${reason.message}`).join("; ");
    return `${item.error.code}${reasons ? ` (${reasons})` : ""}`;
  }
  return item.status === "New" && item.attempts > 0 ? `waiting to retry (${item.attempts} attempts)` : "-";
}

/** The outcome table: one row per item, with its webhook. */
export function outcomeTable(items: WorkItemView[], webhooks: Map<number, ReceivedWebhook>): string {
  const header = ["item", "reference", "status", "webhook", "outcome"];
  const rows = items.map((item) => {
    const hook = webhooks.get(item.workItemId);
    return [String(item.workItemId), item.customerReference, item.status, hook ? `${hook.event.type} (signature verified)` : "none received", outcomeOf(item)];
  });
  const widths = header.map((name, column) => Math.max(name.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => `  ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ")}`.trimEnd();
  const colour = (row: string[]) => {
    const text = line(row);
    return row[2] === "Successful" ? text.replace(row[2], green(row[2])) : row[2] === "Failed" ? text.replace(row[2], red(row[2])) : text;
  };
  return [bold(line(header)), dim(line(widths.map((w) => "─".repeat(w)))), ...rows.map(colour)].join("\n");
}
