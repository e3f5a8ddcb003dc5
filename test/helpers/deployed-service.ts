/**
 * Filing one item through a deployed service, black box over HTTP, for the deployments' tests
 * (test/image/): a token from one API instance, the item added through another, read back until
 * the worker has filed it at the authority and it is Successful, and its webhook received.
 * Every request opens a new connection: podman's network teardown of another container (a CLI
 * run's) may drop the tracked connections through a published port, and a kept-alive socket
 * then dies under the next request.
 */
import assert from "node:assert/strict";
import { Agent, fetch as undiciFetch } from "undici";
import { validWorkItem } from "./test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "./waiting.ts";

const freshConnections = new Agent({ pipelining: 0 });
export const fetchFresh = (url: string, init: Parameters<typeof undiciFetch>[1] = {}) => undiciFetch(url, { ...init, dispatcher: freshConnections });
export const closeFreshConnections = () => freshConnections.close();

/** Resolves once GET `url` answers 2xx; a deployment starts its parts in any order. */
export const waitForOk = (what: string, url: string, timeoutMs = HANG_TIMEOUT_MS) =>
  waitUntil(what, async () => (await fetchFresh(url).catch(() => undefined))?.ok, timeoutMs, 250);

export interface FiledItem {
  workItemId: number;
  status: string;
  result: { registrationNumber?: string } | null;
}

export async function fileOneItem(options: { loginUrl: string; addUrl: string; key: { apiKey: string; secret: string }; webhookUrl: string; customerReference: string }): Promise<FiledItem> {
  const login = await fetchFresh(`${options.loginUrl}/api/Login/Authenticate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey: options.key.apiKey, secret: options.key.secret }),
  });
  assert.equal(login.status, 200, await login.clone().text());
  const { bearerToken } = (await login.json()) as { bearerToken: string };
  const headers = { authorization: `Bearer ${bearerToken}`, "content-type": "application/json" };
  const added = await fetchFresh(`${options.addUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
    method: "POST",
    headers,
    body: JSON.stringify(validWorkItem({ customerReference: options.customerReference, webhookUrl: options.webhookUrl })),
  });
  assert.equal(added.status, 200, await added.clone().text());
  const { workItemId } = (await added.json()) as { workItemId: number };
  return waitUntil(
    `item ${workItemId} to be filed by the worker`,
    async () => {
      const read = await fetchFresh(`${options.loginUrl}/api/AuthorityRvdm/WorkItem/${workItemId}`, { headers }).catch(() => undefined);
      if (read?.status !== 200) return undefined;
      const item = (await read.json()) as FiledItem;
      return item.status === "Successful" ? item : undefined;
    },
    HANG_TIMEOUT_MS,
    500,
  );
}
