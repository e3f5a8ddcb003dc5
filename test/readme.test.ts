/**
 * The README and the pages it leads to, against the code and against each other: the README's
 * opening lines and length, the map to every page, the configuration table of
 * docs/configuration.md against the config schema, the event types docs/integrating.md names,
 * each page saying who it is for, and every relative link and #anchor leading somewhere real.
 * (Their shell examples run in test/doc-examples.test.ts.)
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, test } from "node:test";
import { EnvSchema } from "../src/config.ts";
import { WEBHOOK_EVENT_TYPES } from "../src/domain/event-types.ts";
import { DOCS_PAGES, DOCUMENTS } from "./helpers/documents.ts";
import { REPO_ROOT } from "./helpers/processes.ts";

const read = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");
const readme = read("README.md");

/** The README's length at most: a front door, with the rest in docs/ (issue 46). */
const README_MAX_LINES = 180;

/** The lines of a Markdown text outside its fenced code blocks, each with its 0-based index. */
function proseLines(text: string): Array<{ line: string; index: number }> {
  const lines = text.split("\n");
  const prose: Array<{ line: string; index: number }> = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced) prose.push({ line, index });
  });
  return prose;
}

/** The text of one section: from its heading (written out whole) to the next heading of its level or above. */
function section(text: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const prose = proseLines(text);
  const start = prose.find(({ line }) => line === heading);
  assert.ok(start, `a section "${heading}"`);
  const end = prose.find(({ line, index }) => index > start.index && /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level);
  return text.split("\n").slice(start.index + 1, end?.index).join("\n");
}

/** GitHub's anchor of a heading: lower case, without punctuation (but - and _), spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown file's headings, with GitHub's -1, -2 … for repeats. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every link and image target of a file's prose (inline code left out), with its line. */
function linkTargets(text: string): Array<{ target: string; line: number }> {
  const targets: Array<{ target: string; line: number }> = [];
  for (const { line, index } of proseLines(text)) {
    const withoutCode = line.replace(/`[^`]*`/g, "");
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)\)|<img [^>]*src="([^"]+)"/g)) targets.push({ target: (match[1] ?? match[2])!, line: index + 1 });
  }
  return targets;
}

function configurationRows(): Map<string, { defaultCell: string; meaning: string }> {
  const table = section(read("docs/configuration.md"), "## Environment variables");
  const rows = new Map<string, { defaultCell: string; meaning: string }>();
  for (const line of table.split("\n")) {
    const match = /^\| `([A-Z0-9_]+)` \| (.+?) \| (.+) \|$/.exec(line);
    if (!match) continue;
    assert.ok(!rows.has(match[1]!), `${match[1]} is listed twice`);
    rows.set(match[1]!, { defaultCell: match[2]!, meaning: match[3]! });
  }
  return rows;
}

describe("the README, a front door", () => {
  test("it keeps its two-line start, and stays short", () => {
    const lines = readme.split("\n");
    assert.equal(lines[3], "npm ci && npm start          # the service on the embedded SQLite store, at http://localhost:8080 (docs at /docs)");
    assert.equal(lines[4], "npm ci && npm test           # typecheck, lint and every test");
    assert.ok(lines.length - 1 <= README_MAX_LINES, `README.md has ${lines.length - 1} lines, more than ${README_MAX_LINES}: move the detail to docs/`);
  });

  test("it walks through one item to its filing, and ends in a map to every page", () => {
    for (const heading of ["## Five minutes: one item, filed", "## Where to go next"]) assert.ok(readme.includes(`\n${heading}\n`), heading);
    const walk = section(readme, "## Five minutes: one item, filed");
    for (const step of ["npm run authority-sim &", "AUTHORITY_URL=http://localhost:8090", "BOT_SCHEDULE=", "AddWorkItemCreate", "Successful", "registrationNumber"]) {
      assert.ok(walk.includes(step), `the walk has ${step}`);
    }
    const map = section(readme, "## Where to go next");
    for (const page of [...DOCS_PAGES, "packages/client/README.md"]) assert.ok(map.includes(`](${page})`), `the map links ${page}`);
  });
});

describe("docs/configuration.md", () => {
  const configuration = read("docs/configuration.md");

  test("the table lists every EnvSchema variable and nothing else", () => {
    const rows = configurationRows();
    assert.deepEqual([...rows.keys()].sort(), Object.keys(EnvSchema.properties).sort());
  });

  test("each listed default is the schema's default; optional variables say what unset means", () => {
    const rows = configurationRows();
    for (const [name, schema] of Object.entries(EnvSchema.properties as Record<string, { default?: unknown }>)) {
      const row = rows.get(name)!;
      assert.ok(row.meaning.trim().length > 5, `${name} has a meaning`);
      if (schema.default === undefined) {
        assert.match(row.defaultCell, /^unset: .+/, `${name} is optional: the cell says what unset means`);
      } else {
        assert.equal(row.defaultCell, `\`${String(schema.default)}\``, `${name} default`);
      }
    }
  });

  test("it documents the roles", () => {
    const roles = section(configuration, "## Process roles");
    for (const role of ["all", "api", "worker"]) assert.match(roles, new RegExp(`^\\| \`${role}\``, "m"), `role ${role}`);
  });
});

describe("docs/integrating.md", () => {
  const integrating = read("docs/integrating.md");

  test("it has a section for each thing an integrator does", () => {
    for (const heading of [
      "## Authentication",
      "## The routes",
      "## Adding a work item",
      "## Reading items and batches",
      "## Cancelling",
      "## Bulk add",
      "## Changing and withdrawing a document",
      "## Webhooks",
      "## The event feed",
      "## Generating a client from the OpenAPI document",
    ]) {
      assert.ok(integrating.includes(`\n${heading}\n`), heading);
    }
  });

  test("the webhook and event feed texts name every event type, and count them right", () => {
    const webhooks = section(integrating, "## Webhooks");
    const openApi = section(integrating, "## Generating a client from the OpenAPI document").split("```")[0]!;
    for (const type of WEBHOOK_EVENT_TYPES) {
      assert.ok(webhooks.includes(`\`${type}\``), `the Webhooks section names ${type}`);
      assert.ok(openApi.includes(`\`${type}\``), `the OpenAPI bullets name ${type}`);
    }
    const counted = /the (\w+)\s+types/.exec(section(integrating, "## The event feed"));
    assert.ok(counted, "the event feed says how many types it carries");
    const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    assert.equal(counted[1], NUMBER_WORDS[WEBHOOK_EVENT_TYPES.length]);
  });
});

describe("every document", () => {
  test("each page of docs/, and the SDK's README, says first who it is for", () => {
    for (const file of [...DOCS_PAGES, "packages/client/README.md"]) {
      const lines = read(file).split("\n");
      assert.match(lines[0]!, /^# /, `${file} starts with its title`);
      const first = lines.slice(1).find((line) => line.trim() !== "");
      assert.match(first ?? "", /^For \S/, `${file}: the first line after the title says who the page is for ("For …")`);
    }
  });

  test("every relative link leads to a file that exists, and every #anchor to a heading in it", () => {
    const broken: string[] = [];
    for (const file of DOCUMENTS) {
      for (const { target, line } of linkTargets(read(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not a file of this repository
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const linked = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        const where = `${file}:${line}: ${target}`;
        if (linked.startsWith("..") || !existsSync(join(REPO_ROOT, linked))) {
          broken.push(`${where} (no file ${linked})`);
          continue;
        }
        if (anchor !== undefined && linked.endsWith(".md") && !anchors(read(linked)).has(anchor)) broken.push(`${where} (no heading with that anchor in ${linked})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test("the anchors are GitHub's", () => {
    assert.equal(slug("3. How the schema distributes by company (Citus)"), "3-how-the-schema-distributes-by-company-citus");
    assert.equal(slug("Signing in with your identity provider (OpenID Connect)"), "signing-in-with-your-identity-provider-openid-connect");
    assert.equal(slug("PostgreSQL (any number of `api` and `worker` processes)"), "postgresql-any-number-of-api-and-worker-processes");
    assert.deepEqual([...anchors("# A\n## B\n```sh\n# not a heading\n```\n## B\n")], ["a", "b", "b-1"]);
  });
});
