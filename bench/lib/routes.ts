/**
 * What each benchmarked route sends: a list of raw request templates the load generator
 * cycles through, so tokens, companies and bodies rotate. The ceiling is driven with exactly
 * the same bytes as the route it is compared with.
 */
import type { RouteName } from "./options.ts";

/** The method each route is called with. */
export const ROUTE_METHOD: Record<RouteName, "GET" | "POST"> = { Authenticate: "POST", Ping: "GET", AddWorkItemCreate: "POST", WorkItem: "GET", WorkItems: "GET" };

export interface RequestTemplate {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** A marker in `body` replaced by a fresh value per request (unique customer references). */
  unique?: string;
}

export interface BenchTenant {
  companyId: number;
  apiKey: string;
  secret: string;
  token: string;
  /** Ids of items this company owns, for WorkItem/{id} and WorkItems cursors. */
  itemIds: number[];
}

export const UNIQUE_MARKER = "@REF@";

/** Realistic AddWorkItemCreate bodies: every field the seed names, in three shapes. */
export function workItemBodies(companyId: number, unique = UNIQUE_MARKER): string[] {
  const common = {
    productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest, vloeibaar" },
    destinationCountry: { sendValue: "DE", documentValue: "Duitsland" },
    exportDate: "2027-03-01T08:00:00Z",
    senderChamberOfCommerceNo: { sendValue: String(10_000_000 + companyId * 1111) },
    receiverChamberOfCommerceNo: { sendValue: "87654321" },
  };
  return [
    {
      customerReference: `ORD-${companyId}-${unique}`,
      documentReference: `DOC-2027-${companyId}`,
      ...common,
      destinationRegion: { sendValue: "NW", documentValue: "Nordrhein-Westfalen" },
      senderDomestic: { sendValue: "true" },
      receiverDomestic: { sendValue: "false" },
      requestNo: { sendValue: `REQ-${companyId}-000042` },
      plannedLoad: 31.5,
      certificateLanguage: { sendValue: "NL", documentValue: "Nederlands" },
      certificateType: { sendValue: "EXPORT", documentValue: "Exportcertificaat" },
    },
    { customerReference: `TRN-${companyId}-${unique}`, ...common, plannedLoad: 12 },
    // A .NET-style client: PascalCase names, a number in a string and an extra translation object.
    {
      CustomerReference: `VDM-${companyId}-${unique}`,
      DocumentReference: null,
      ProductName: { SendValue: "VARKENSDRIJFMEST", DocumentValue: "Varkensdrijfmest" },
      DestinationCountry: { SendValue: "BE", DocumentValue: "België" },
      ExportDate: "2027-03-02T10:30:00",
      SenderChamberOfCommerceNo: { SendValue: String(10_000_000 + companyId * 1111) },
      ReceiverChamberOfCommerceNo: { SendValue: "23456789" },
      PlannedLoad: "28.75",
      ManureCode: { SendValue: "14", DocumentValue: "Rundvee, drijfmest" },
    },
  ].map((body) => JSON.stringify(body));
}

const json = { "Content-Type": "application/json" };
const bearer = (tenant: BenchTenant) => ({ Authorization: `Bearer ${tenant.token}` });
const cursorFor = (workItemId: number) => Buffer.from(`v1:${workItemId}`).toString("base64url");

/** Every route's templates, interleaving companies so consecutive requests change tenant. */
export function templatesFor(route: RouteName, tenants: BenchTenant[]): RequestTemplate[] {
  const perTenant = (make: (tenant: BenchTenant) => RequestTemplate[]) => interleave(tenants.map(make));
  switch (route) {
    case "Authenticate":
      return perTenant((t) => [{ method: "POST", path: "/api/Login/Authenticate", headers: json, body: JSON.stringify({ apiKey: t.apiKey, secret: t.secret }) }]);
    case "Ping":
      return perTenant((t) => [{ method: "GET", path: "/api/AuthorityRvdm/Ping", headers: bearer(t) }]);
    case "AddWorkItemCreate":
      return perTenant((t) =>
        workItemBodies(t.companyId).map((body) => ({ method: "POST", path: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { ...json, ...bearer(t) }, body, unique: UNIQUE_MARKER })),
      );
    case "WorkItem":
      return perTenant((t) => t.itemIds.slice(0, 200).map((id) => ({ method: "GET", path: `/api/AuthorityRvdm/WorkItem/${id}`, headers: bearer(t) })));
    case "WorkItems":
      // The first page, and keyset pages starting at items spread over the company's history.
      return perTenant((t) => [
        { method: "GET", path: "/api/AuthorityRvdm/WorkItems?limit=50", headers: bearer(t) },
        ...spread(t.itemIds, 9).map((id) => ({ method: "GET" as const, path: `/api/AuthorityRvdm/WorkItems?limit=50&cursor=${cursorFor(id)}`, headers: bearer(t) })),
      ]);
  }
}

/** The pg baseline takes the company from a header instead of a token. */
export function baselineTemplates(tenants: BenchTenant[]): RequestTemplate[] {
  return interleave(
    tenants.map((t) =>
      workItemBodies(t.companyId).map((body) => ({
        method: "POST" as const,
        path: "/AddWorkItemCreate",
        headers: { ...json, "X-Company-Id": String(t.companyId) },
        body: body.replace(/"(C|c)ustomerReference"/, '"customerReference"'),
        unique: UNIQUE_MARKER,
      })),
    ),
  );
}

function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}

function spread(ids: number[], count: number): number[] {
  if (ids.length === 0) return [];
  const sorted = [...ids].sort((a, b) => a - b);
  return Array.from({ length: count }, (_, i) => sorted[Math.floor(((i + 1) * sorted.length) / (count + 1))]!);
}
