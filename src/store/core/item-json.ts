/**
 * An integrator's view of a work item as JSON text, made by the database in the statement that
 * reads it (SQLite's json_object, PostgreSQL's json_build_object). The read routes answer that
 * text as it is: a page of 50 items no longer goes through row objects, a JSON.parse of each
 * stored body, the view mapper and Fastify's serializer (docs/performance.md has the figures).
 *
 * It is the same view as rows.ts's toWorkItemView, which everything else still uses; the
 * store contract suite holds the two equal on both stores, item kind by kind. The one rule of
 * toWorkItemView that is not restated here (an exportDate stored before intake wrote it as a
 * UTC instant with Z) makes the statement answer no text for that row, and the core maps such
 * a row the usual way.
 */
import type { Dialect } from "../port.ts";

/** The view's fields in toWorkItemView's order, each as a column expression. */
function viewFields(d: Dialect, withRevision: boolean): string {
  return d.jsonObject([
    ["workItemId", "work_item_id"],
    ["workBatchId", "work_batch_id"],
    ["workType", "work_type"],
    ["status", "status"],
    ["kind", "kind"],
    ["originalWorkItemId", "original_work_item_id"],
    ...(withRevision ? ([["revision", "revision"]] as Array<[string, string]>) : []),
    ["customerReference", "customer_reference"],
    ["documentReference", "document_reference"],
    ["webhookUrl", "webhook_url"],
    ["request", d.embeddedJson("request")],
    ["result", d.embeddedJson("result")],
    ["error", d.embeddedJson("error")],
    ["attempts", "attempts"],
    [
      "authority",
      d.jsonObject([
        ["applicationNumber", "application_number"],
        ["registrationNumber", "registration_number"],
        ["submittedAt", d.isoTime("submitted_at")],
        ["decidedAt", d.isoTime("decided_at")],
      ]),
    ],
    ["deadlineAt", d.isoTime("deadline_at")],
    ["createdAt", d.isoTime("created_at")],
    ["updatedAt", d.isoTime("updated_at")],
    ["completedAt", d.isoTime("completed_at")],
  ]);
}

/** The view as a text column named `view`: NULL for a row whose stored exportDate still needs rows.ts's rewrite. */
export function workItemViewColumn(d: Dialect): string {
  const exportDate = d.jsonText("request", "exportDate");
  return `CASE WHEN ${exportDate} IS NOT NULL AND ${exportDate} NOT LIKE '%Z' THEN NULL
    WHEN kind = 'create' THEN ${d.jsonAsText(viewFields(d, true))}
    ELSE ${d.jsonAsText(viewFields(d, false))} END AS view`;
}
