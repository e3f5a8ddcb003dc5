/**
 * The simulated Authority's business rules (SPEC §5). Each broken rule is one field-level
 * reason; an item with no reasons is registered.
 */
import type { FieldReason } from "../authority/protocol.ts";
import { ISO_3166_1_ALPHA_2 } from "./iso-3166-1-alpha-2.ts";

const CHAMBER_OF_COMMERCE_NO = /^[0-9]{8}$/;

const sendValue = (request: Record<string, unknown>, field: string): unknown => {
  const value = request[field];
  return value !== null && typeof value === "object" ? (value as { sendValue?: unknown }).sendValue : undefined;
};

/** Why the Authority refuses `request`; empty when it accepts. `now` decides what "past" means. */
export function rejectionReasons(request: Record<string, unknown>, now: Date): FieldReason[] {
  const reasons: FieldReason[] = [];
  for (const field of ["senderChamberOfCommerceNo", "receiverChamberOfCommerceNo"]) {
    const value = sendValue(request, field);
    if (typeof value !== "string" || !CHAMBER_OF_COMMERCE_NO.test(value)) {
      reasons.push({ field, message: `must be a chamber-of-commerce number of exactly 8 digits, got ${JSON.stringify(value ?? null)}` });
    }
  }
  const country = sendValue(request, "destinationCountry");
  if (typeof country !== "string" || !ISO_3166_1_ALPHA_2.has(country)) {
    reasons.push({ field: "destinationCountry", message: `must be an assigned ISO 3166-1 alpha-2 country code such as DE, got ${JSON.stringify(country ?? null)}` });
  }
  const exportDate = typeof request.exportDate === "string" ? Date.parse(request.exportDate) : NaN;
  // "Past" is before today (UTC): an export later today is still fine.
  const startOfToday = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  if (Number.isNaN(exportDate)) {
    reasons.push({ field: "exportDate", message: "must be an ISO 8601 date-time" });
  } else if (exportDate < startOfToday) {
    reasons.push({ field: "exportDate", message: `must not be in the past, got ${String(request.exportDate)}` });
  }
  return reasons;
}
