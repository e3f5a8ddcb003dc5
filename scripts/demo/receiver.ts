/**
 * The demo's webhook receiver: a loopback HTTP server that verifies each delivery with the SDK's
 * verifyWebhook, exactly as an integrator would, and keeps one event per webhook-id (deliveries
 * are at-least-once).
 */
import { createServer, type Server } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/index.ts";

export interface ReceivedWebhook {
  webhookId: string;
  event: WebhookEvent;
}

export interface Receiver {
  url: string;
  /** Verified events, one per webhook-id, by work item id. */
  byItem: Map<number, ReceivedWebhook>;
  /** Deliveries that failed verification, with the reason. */
  refused: string[];
  close(): Promise<void>;
}

export async function startReceiver(secret: () => string | undefined): Promise<Receiver> {
  const byItem = new Map<number, ReceivedWebhook>();
  const refused: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const key = secret();
      if (request.method !== "POST" || !key) {
        response.writeHead(503).end();
        return;
      }
      try {
        const event = verifyWebhook(request.headers, Buffer.concat(chunks), key);
        const webhookId = String(request.headers["webhook-id"]);
        byItem.set(event.data.workItemId, { webhookId, event });
        response.writeHead(204).end();
      } catch (error) {
        refused.push(error instanceof WebhookVerificationError ? error.message : String(error));
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hooks/work-items`,
    byItem,
    refused,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
