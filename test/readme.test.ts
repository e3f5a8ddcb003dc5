/** The README's configuration table lists exactly the variables of EnvSchema, with their defaults. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { EnvSchema } from "../src/config.ts";
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
