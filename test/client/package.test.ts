/**
 * `work-item-api/client` as an integrator gets it: built by `tsc -p tsconfig.build.json` (the
 * dist/ `npm ci` made, while it is current), resolved through the package's own "exports" map,
 * run by plain Node 20 ESM (no tsx, no node_modules at all), and type-checked by a consumer with
 * real (not `any`) types.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { buildIsCurrent } from "../../bin/build-state.mjs";
import { REPO_ROOT } from "../helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const CONSUMER_JS = `
import { createServer } from "node:http";
import { createHmac } from "node:crypto";
import { WorkItemClient, WorkItemApiError, verifyWebhook } from "work-item-api/client";

let logins = 0;
const server = createServer((req, res) => {
  if (req.url === "/api/Login/Authenticate") {
    logins++;
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ bearerToken: "tok", expires: new Date(Date.now() + 1200e3).toISOString() }));
  }
  if (req.url === "/api/AuthorityRvdm/Ping" && req.headers.authorization === "Bearer tok") {
    res.writeHead(200, { "content-type": "text/plain" });
    return res.end("Pong --> Saturday, 21 November 2026 14:03:12");
  }
  res.writeHead(404, { "content-type": "application/problem+json" });
  res.end(JSON.stringify({ type: "urn:work-item-api:problem:not-found", title: "Not Found", status: 404, detail: "no", instance: req.url, traceId: "tr-1" }));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const client = new WorkItemClient({ baseUrl: "http://127.0.0.1:" + server.address().port, apiKey: "wia_1_0", secret: "wis_0" });
const pongs = [await client.pingAuthorityRvdm(), await client.pingVlmMad().catch((e) => e)];
const key = Buffer.alloc(32, 7);
const body = JSON.stringify({ type: "workitem.succeeded", timestamp: "t", data: { workItemId: 1 } });
const ts = String(Math.floor(Date.now() / 1000));
const sig = createHmac("sha256", key).update("msg_1." + ts + "." + body).digest("base64");
const event = verifyWebhook({ "webhook-id": "msg_1", "webhook-timestamp": ts, "webhook-signature": "v1," + sig }, body, "whsec_" + key.toString("base64"));
console.log(JSON.stringify({ pong: pongs[0], notFound: pongs[1] instanceof WorkItemApiError ? pongs[1].traceId : String(pongs[1]), logins, event: event.type }));
server.close();
`;

const CONSUMER_TS = `
import { WorkItemClient, verifyWebhook, type AuthorityRvdmWorkItemCreate, type EventPage, type EventType, type WorkItemView, type WebhookEvent, type WebhookDelivery } from "work-item-api/client";
export async function use(client: WorkItemClient, body: AuthorityRvdmWorkItemCreate): Promise<number> {
  const added = await client.addWorkItemCreate(body, { idempotencyKey: "k" });
  const view: WorkItemView = await client.getWorkItem(added.workItemId);
  // @ts-expect-error workItemId is a number: the types are real, not any
  const wrong: string = view.workItemId;
  // @ts-expect-error status is the union of the server's schema
  const status: typeof view.status = "Done";
  // Two-stage filing (SPEC §10) is in the types: the state, the authority's numbers, the deadline, the filter, the events.
  const submitted: typeof view.status = "Submitted";
  const applicationNumber: string | null = view.authority.applicationNumber;
  const deadlineAt: string | null = view.deadlineAt;
  await client.listWorkItems({ deadlineBefore: "2026-12-24T00:00:00Z", status: "Submitted" });
  const eventTypes: Array<WebhookEvent["type"]> = ["workitem.submitted", "workitem.deadline_at_risk"];
  // The event feed (SPEC §11.2): one page, and every page through the iterator.
  const page: EventPage = await client.listEvents({ type: "workitem.failed", limit: 500 });
  for await (const event of client.events({ after: page.nextCursor, workItemId: view.workItemId })) {
    const type: EventType = event.type;
    const id: string = event.eventId;
    void type; void id;
  }
  // @ts-expect-error an unknown event type is not a filter
  await client.listEvents({ type: "workitem.created" });
  // Webhook deliveries (SPEC §11.3): the list, its filter's union, redelivery, and two secrets for a rotation.
  const deliveryPage = await client.listWebhookDeliveries({ status: "failed", workItemId: view.workItemId });
  const delivery: WebhookDelivery | undefined = deliveryPage.deliveries[0];
  const statusCode: number | null | undefined = delivery?.attempts[0]?.statusCode;
  // @ts-expect-error the delivery status filter is lower case
  await client.listWebhookDeliveries({ status: "Failed" });
  const redelivered: WebhookDelivery = await client.redeliverWebhook(delivery?.deliveryId ?? 1);
  const verified: WebhookEvent = verifyWebhook({}, "", ["whsec_a", "whsec_b"]);
  // Bulk add (SPEC §11.1): the body and each result are typed from the server's schemas.
  const bulk = await client.addWorkItemCreateBulk({ items: [body, body], allOrNothing: false }, { idempotencyKey: "b" });
  const stored: number[] = bulk.results.flatMap((result) => ("workItemId" in result ? [result.workItemId] : []));
  const refused: string[] = bulk.results.flatMap((result) => ("errors" in result ? Object.keys(result.errors) : []));
  // @ts-expect-error items must be work item bodies
  await client.addWorkItemCreateBulk({ items: [1] });
  void wrong; void status; void submitted; void applicationNumber; void deadlineAt; void eventTypes; void stored; void refused; void statusCode; void redelivered; void verified;
  return view.workItemId + added.workBatchId;
}
`;

describe("package subpath work-item-api/client", { timeout: HANG_TIMEOUT_MS }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "wia-pkg-"));
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: pkg.name, version: pkg.version, type: pkg.type, exports: pkg.exports }));
    // `npm ci` made dist/ with this very command; while it is current, its client is the build.
    if (buildIsCurrent(REPO_ROOT, "dist/client/index.js")) {
      cpSync(join(REPO_ROOT, "dist"), join(dir, "dist"), { recursive: true });
      return;
    }
    execFileSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", join(REPO_ROOT, "tsconfig.build.json"), "--outDir", join(dir, "dist")], {
      cwd: REPO_ROOT,
      stdio: "pipe",
    });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("the build emits the client's JavaScript and declarations where exports points", () => {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { exports: Record<string, { types: string; import: string }> };
    for (const file of [pkg.exports["./client"]!.types, pkg.exports["./client"]!.import]) {
      assert.ok(readFileSync(join(dir, file), "utf8").length > 0, file);
    }
  });

  test("the client's JavaScript imports nothing but node: built-ins and its own files", () => {
    const clientDir = join(dir, "dist", "client");
    for (const file of readdirSync(clientDir).filter((name) => name.endsWith(".js"))) {
      const source = readFileSync(join(clientDir, file), "utf8");
      for (const [, specifier] of source.matchAll(/(?:^|\s)(?:import|export)\b[^'"]*?from\s+["']([^"']+)["']/gm)) {
        assert.ok(specifier!.startsWith("node:") || /^\.\/[\w-]+\.js$/.test(specifier!), `${file} imports ${specifier}`);
      }
      assert.doesNotMatch(source, /\bimport\(|\brequire\(/, `${file} loads nothing dynamically`);
    }
  });

  test("plain Node ESM imports it by its package name, with no node_modules present", () => {
    writeFileSync(join(dir, "consumer.mjs"), CONSUMER_JS);
    const result = spawnSync(process.execPath, ["consumer.mjs"], { cwd: dir, encoding: "utf8", timeout: HANG_TIMEOUT_MS, env: { PATH: process.env.PATH ?? "" } });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { pong: "Pong --> Saturday, 21 November 2026 14:03:12", notFound: "tr-1", logins: 1, event: "workitem.succeeded" });
  });

  test("a TypeScript consumer type-checks against the emitted declarations", () => {
    mkdirSync(join(dir, "src"), { recursive: true });
    writeFileSync(join(dir, "src", "use.mts"), CONSUMER_TS);
    // Only for the declarations' own `import type` of @sinclair/typebox.
    symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, skipLibCheck: false, types: ["node"] }, files: ["src/use.mts"] }),
    );
    const result = spawnSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { cwd: dir, encoding: "utf8", timeout: HANG_TIMEOUT_MS });
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });
});
