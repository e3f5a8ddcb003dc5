/**
 * An integrator's client as a generator makes it: the types come from `openapi-typescript` run
 * over /openapi.json (./generated/schema.ts, written by test/http/openapi-generators.test.ts),
 * and the calls go through `openapi-fetch`. No casts: if the document stops fitting a normal
 * call, this file stops type-checking (test/openapi-client/tsconfig.json).
 */
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/schema.ts";

type WorkItemCreate = components["schemas"]["AuthorityRvdmWorkItemCreate"];
type WorkItemView = components["schemas"]["WorkItemView"];

export interface DriveResult {
  pong: string;
  added: components["schemas"]["WorkItemBatchKey"];
  replayed: string | null;
  read: WorkItemView;
  listed: number[];
  cancelled: WorkItemView;
  missingStatus: number;
}

/** authenticate → ping → add → get → list → cancel, as a generated client does it. */
export async function drive(baseUrl: string, apiKey: string, secret: string, customerReference: string): Promise<DriveResult> {
  const client = createClient<paths>({ baseUrl });
  const login = await client.POST("/api/Login/Authenticate", { body: { apiKey, secret } });
  if (!login.data) throw new Error(`Authenticate answered ${login.response.status}`);
  const token = login.data.bearerToken;
  const bearer: Middleware = {
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
  };
  client.use(bearer);

  const ping = await client.GET("/api/AuthorityRvdm/Ping", { parseAs: "text" });
  if (ping.data === undefined) throw new Error(`Ping answered ${ping.response.status}`);

  // Only the named fields: the body stays open to extra translation objects on the wire.
  const body: WorkItemCreate = {
    customerReference,
    productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest" },
    destinationCountry: { sendValue: "DE" },
    exportDate: "2099-12-01T08:00:00Z",
    senderChamberOfCommerceNo: { sendValue: "12345678" },
    senderDomestic: { sendValue: "true" },
    receiverChamberOfCommerceNo: { sendValue: "87654321" },
    plannedLoad: 31.5,
  };
  const idempotencyKey = `${customerReference}-1`;
  const add = () => client.POST("/api/AuthorityRvdm/AddWorkItemCreate", { body, params: { header: { "idempotency-key": idempotencyKey } } });
  const added = await add();
  if (!added.data) throw new Error(`AddWorkItemCreate answered ${added.response.status}`);
  const again = await add();

  const workItemId = added.data.workItemId;
  const read = await client.GET("/api/AuthorityRvdm/WorkItem/{workItemId}", { params: { path: { workItemId } } });
  if (!read.data) throw new Error(`GetWorkItem answered ${read.response.status}`);

  // No limit: it is optional.
  const list = await client.GET("/api/AuthorityRvdm/WorkItems", { params: { query: { customerReference } } });
  if (!list.data) throw new Error(`ListWorkItems answered ${list.response.status}`);

  const cancel = await client.DELETE("/api/AuthorityRvdm/WorkItem/{workItemId}", { params: { path: { workItemId } } });
  if (!cancel.data) throw new Error(`CancelWorkItem answered ${cancel.response.status}`);

  const missing = await client.GET("/api/AuthorityRvdm/WorkBatch/{workBatchId}", { params: { path: { workBatchId: 999_999_999 } } });

  return {
    pong: ping.data,
    added: added.data,
    replayed: again.response.headers.get("idempotency-replayed"),
    read: read.data,
    listed: list.data.items.map((item) => item.workItemId),
    cancelled: cancel.data,
    missingStatus: missing.response.status,
  };
}
