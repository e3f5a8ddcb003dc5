/**
 * `@work-item-api/client` as an integrator gets it: `npm pack ./packages/client` (its prepack
 * builds it), the tarball installed into an empty project offline, TypeScript files compiled
 * against it with `tsc --strict` (the `ts` examples of the documents among them, so they cannot rot), and
 * the results run, ESM and CommonJS, against a real server on loopback.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sqliteBackend } from "../helpers/backends.ts";
import { DOCUMENTS } from "../helpers/documents.ts";
import { createKeyWithCli, REPO_ROOT, startServer, type CliKey, type ServerProcess } from "../helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const PACKAGE_DIR = join(REPO_ROOT, "packages", "client");
const TSC = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");

/** Compile-time checks a consumer relies on: real types, not `any`, from the packed declarations. */
const TYPED_USE = `
import { WorkItemClient, verifyWebhook, type AuthorityRvdmWorkItemCreate, type EventPage, type EventType, type WorkItemView, type WebhookEvent, type WebhookDelivery } from "@work-item-api/client";
export async function use(client: WorkItemClient, body: AuthorityRvdmWorkItemCreate): Promise<number> {
  const added = await client.addWorkItemCreate(body, { idempotencyKey: "k" });
  const view: WorkItemView = await client.getWorkItem(added.workItemId);
  // @ts-expect-error workItemId is a number: the types are real, not any
  const wrong: string = view.workItemId;
  // @ts-expect-error status is the union of the server's schema
  const status: typeof view.status = "Done";
  const applicationNumber: string | null = view.authority.applicationNumber;
  const page: EventPage = await client.listEvents({ type: "workitem.failed", limit: 500 });
  for await (const event of client.events({ after: page.nextCursor, workItemId: view.workItemId })) {
    const type: EventType = event.type;
    void type;
  }
  // @ts-expect-error an unknown event type is not a filter
  await client.listEvents({ type: "workitem.created" });
  const delivery: WebhookDelivery | undefined = (await client.listWebhookDeliveries({ status: "failed" })).deliveries[0];
  // @ts-expect-error the delivery status filter is lower case
  await client.listWebhookDeliveries({ status: "Failed" });
  const verified: WebhookEvent = verifyWebhook({}, "", ["whsec_a", "whsec_b"]);
  const bulk = await client.addWorkItemCreateBulk({ items: [body, body], allOrNothing: false });
  const stored: number[] = bulk.results.flatMap((result) => ("workItemId" in result ? [result.workItemId] : []));
  // @ts-expect-error items must be work item bodies
  await client.addWorkItemCreateBulk({ items: [1] });
  void wrong; void status; void applicationNumber; void delivery; void verified; void stored;
  return view.workItemId + added.workBatchId;
}
`;

/** Through require(): a ping and an add with the CommonJS build. */
const COMMONJS_USE = `
const { WorkItemClient } = require("@work-item-api/client");
const client = new WorkItemClient({ baseUrl: process.env.WIA_BASE_URL, apiKey: process.env.WIA_API_KEY, secret: process.env.WIA_SECRET });
client.pingVlmMad().then((pong) => console.log(pong), (error) => { console.error(error); process.exit(1); });
`;

/** The ```ts blocks of a Markdown file, each with the line it starts on. */
function typeScriptExamples(file: string): Array<{ line: number; code: string }> {
  const lines = readFileSync(join(REPO_ROOT, file), "utf8").split("\n");
  const examples: Array<{ line: number; code: string }> = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== "```ts") continue;
    const end = lines.indexOf("```", index + 1);
    examples.push({ line: index + 1, code: lines.slice(index + 1, end).join("\n") });
    index = end;
  }
  return examples;
}

/** Every document a reader meets; the SDK's README holds the examples today. */
const EXAMPLE_FILES = DOCUMENTS;

describe("the packed SDK, installed into an empty project", { timeout: HANG_TIMEOUT_MS }, () => {
  let dir: string;
  let project: string;
  let tarball: string;
  let data: Awaited<ReturnType<typeof sqliteBackend.create>>;
  let server: ServerProcess;
  let key: CliKey;
  const run = (command: string, args: string[], env: Record<string, string> = {}) =>
    spawnSync(command, args, { cwd: project, encoding: "utf8", timeout: HANG_TIMEOUT_MS, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, ...env } });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "wia-sdk-"));
    project = join(dir, "project");
    mkdirSync(project);
    const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: PACKAGE_DIR, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as Array<{ filename: string }>;
    tarball = join(dir, packed[0]!.filename);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "integrator", version: "0.0.0", private: true, type: "module" }));
    const install = run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball]);
    assert.equal(install.status, 0, install.stdout + install.stderr);
    data = await sqliteBackend.create();
    server = await startServer({ DATABASE_URL: data.databaseUrl });
    key = await createKeyWithCli(data.databaseUrl, 42);
  });
  after(async () => {
    await server?.stop();
    await data?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the tarball holds the build, its README and CHANGELOG, and depends on nothing", () => {
    const installed = join(project, "node_modules", "@work-item-api", "client");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Record<string, unknown>;
    assert.equal(manifest.name, "@work-item-api/client");
    assert.match(String(manifest.version), /^\d+\.\d+\.\d+$/);
    assert.equal(manifest.private, undefined);
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) assert.equal(manifest[field], undefined, field);
    assert.match(readFileSync(join(installed, "CHANGELOG.md"), "utf8"), new RegExp(`^## ${String(manifest.version).replaceAll(".", "\\.")}$`, "m"));
    assert.match(readFileSync(join(installed, "README.md"), "utf8"), /npm install .*work-item-api-client/);
    for (const folder of ["esm", "cjs"]) {
      const files = readdirSync(join(installed, "dist", folder));
      for (const file of files.filter((name) => /\.(js|d\.ts)$/.test(name))) {
        const source = readFileSync(join(installed, "dist", folder, file), "utf8");
        for (const [, from, required] of source.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']|\brequire\(["']([^"']+)["']\)/gm)) {
          const specifier = from ?? required!;
          assert.ok(specifier.startsWith("node:") || /^\.\/[\w-]+\.js$/.test(specifier), `${folder}/${file} imports ${specifier}`);
        }
      }
    }
  });

  test("the README examples and a typed consumer compile with tsc --strict and the examples run against the server", () => {
    const sources = join(project, "src");
    mkdirSync(sources);
    const examples = EXAMPLE_FILES.flatMap((file) => typeScriptExamples(file).map((example) => ({ ...example, file })));
    assert.ok(typeScriptExamples("packages/client/README.md").length >= 2, "the SDK's README has its examples: a first use and a longer tour");
    const names = examples.map((example, index) => {
      const name = `example-${index}.ts`;
      // The one thing a reader changes too: where their service listens.
      writeFileSync(join(sources, name), example.code.replaceAll("http://localhost:8080", server.baseUrl));
      return name;
    });
    writeFileSync(join(sources, "typed-use.ts"), TYPED_USE);
    const compile = run(process.execPath, [
      TSC, "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
      "--types", "node", "--typeRoots", join(REPO_ROOT, "node_modules", "@types"), "--outDir", "out", "--rootDir", "src", ...readdirSync(sources).map((name) => join("src", name)),
    ]);
    assert.equal(compile.status, 0, compile.stdout + compile.stderr);
    examples.forEach((example, index) => {
      const result = run(process.execPath, [join("out", names[index]!.replace(/\.ts$/, ".js"))], { WIA_API_KEY: key.apiKey, WIA_SECRET: key.secret });
      assert.equal(result.status, 0, `${example.file}:${example.line}\n${result.stdout}${result.stderr}`);
      assert.match(result.stdout, /^Pong --> /m, `${example.file}:${example.line} pings`);
    });
  });

  test("require() loads the CommonJS build, which talks to the server", () => {
    writeFileSync(join(project, "use.cjs"), COMMONJS_USE);
    const result = run(process.execPath, ["use.cjs"], { WIA_BASE_URL: server.baseUrl, WIA_API_KEY: key.apiKey, WIA_SECRET: key.secret });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^Pong --> /);
  });
});
