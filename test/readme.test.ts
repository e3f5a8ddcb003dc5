/** The README against the code: the configuration table, the opening lines, the event types it names. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { EnvSchema } from "../src/config.ts";
import { WEBHOOK_EVENT_TYPES } from "../src/domain/event-types.ts";
import { REPO_ROOT } from "./helpers/processes.ts";

const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

function configurationRows(): Map<string, { defaultCell: string; meaning: string }> {
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0];
  assert.ok(section, "README has a ## Configuration section");
  const rows = new Map<string, { defaultCell: string; meaning: string }>();
  for (const line of section.split("\n")) {
    const match = /^\| `([A-Z0-9_]+)` \| (.+?) \| (.+) \|$/.exec(line);
    if (!match) continue;
    assert.ok(!rows.has(match[1]!), `${match[1]} is listed twice`);
    rows.set(match[1]!, { defaultCell: match[2]!, meaning: match[3]! });
  }
  return rows;
}

test("the configuration table lists every EnvSchema variable and nothing else", () => {
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

test("the README keeps its two-line start and documents the roles", () => {
  const lines = readme.split("\n");
  assert.equal(lines[3], "npm ci && npm start          # the service on the embedded SQLite store, at http://localhost:8080 (docs at /docs)");
  assert.equal(lines[4], "npm ci && npm test           # typecheck, lint and every test");
  for (const role of ["all", "api", "worker"]) assert.match(readme, new RegExp(`^\\| \`${role}\``, "m"), `role ${role}`);
  for (const heading of ["## Quick start", "## Authentication, step by step", "## Client SDK", "## Process roles", "## Configuration"]) {
    assert.ok(readme.includes(`\n${heading}\n`), heading);
  }
});

test("the webhook and event feed texts name every event type, and count them right", () => {
  const webhooks = readme.split("**Webhooks.**")[1]?.split("**Event feed.**")[0] ?? "";
  const openApi = readme.split("### Generating a client from the OpenAPI document")[1]?.split("```")[0] ?? "";
  for (const type of WEBHOOK_EVENT_TYPES) {
    assert.ok(webhooks.includes(`\`${type}\``), `the Webhooks paragraph names ${type}`);
    assert.ok(openApi.includes(`\`${type}\``), `the OpenAPI bullets name ${type}`);
  }
  const counted = /the (\w+)\s+types above/.exec(readme.split("**Event feed.**")[1] ?? "");
  assert.ok(counted, "the event feed says how many types it carries");
  const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
  assert.equal(counted[1], NUMBER_WORDS[WEBHOOK_EVENT_TYPES.length]);
});
