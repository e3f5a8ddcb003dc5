/**
 * The house as docs/architecture.md draws it, checked on the code's own imports: the rooms of
 * src/ (a folder, or a file directly in src/) import one another without a circle, the bottom
 * rooms import no other, the simulator never the bot, the SDK nothing of the server but types;
 * and no source file grows past 400 lines.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { test } from "node:test";

const MAX_LINES = 400;
/** Data, not code: the ISO 3166 country list. */
const DATA_FILES = new Set(["src/authority-sim/iso-3166-1-alpha-2.ts"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const roomOf = (file: string) => relative("src", file).split(sep)[0]!;

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every relative import and re-export of a file, whole statements (they may span lines). */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const found: Import[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\bfrom\s+"(\.[^"]+)"|\bimport\(\s*"(\.[^"]+)"\s*\)/gms)) {
    const target = match[2] ?? match[3]!;
    found.push({ from: file, to: normalize(join(dirname(file), target)), typeOnly: match[1] !== undefined });
  }
  return found;
}

const files = sourceFiles("src");
const imports = files.flatMap(importsOf).filter((edge) => edge.to.startsWith(`src${sep}`));
const graph = new Map<string, Set<string>>();
for (const edge of imports) {
  const [from, to] = [roomOf(edge.from), roomOf(edge.to)];
  if (from === to) continue;
  if (!graph.has(from)) graph.set(from, new Set());
  graph.get(from)!.add(to);
}

test("the rooms of src/ import one another without a circle", () => {
  const state = new Map<string, "visiting" | "done">();
  const walk = (room: string, path: string[]): void => {
    if (state.get(room) === "done") return;
    assert.notEqual(state.get(room), "visiting", `a circle of rooms: ${[...path, room].join(" → ")}`);
    state.set(room, "visiting");
    for (const next of graph.get(room) ?? []) walk(next, [...path, room]);
    state.set(room, "done");
  };
  for (const room of graph.keys()) walk(room, []);
  assert.ok(graph.size > 10, "the rooms were found");
});

test("domain/, scheduler/ and telemetry/ import no other room; the simulator never imports the bot", () => {
  assert.deepEqual([...(graph.get("domain") ?? [])], []);
  assert.deepEqual([...(graph.get("scheduler") ?? [])], []);
  assert.deepEqual([...(graph.get("telemetry") ?? [])], [], "tracing sits under everything that starts spans, the logger included");
  assert.ok(!graph.get("authority-sim")?.has("bot"));
  assert.ok(graph.get("bot")?.has("authority-sim"), "the check can see an import (the bot starts the built-in simulator)");
});

test("the SDK imports nothing of the server but types", () => {
  const outside = imports.filter((edge) => roomOf(edge.from) === "client" && roomOf(edge.to) !== "client");
  assert.ok(outside.length > 0, "the SDK's types come from the server's schemas");
  assert.deepEqual(
    outside.filter((edge) => !edge.typeOnly).map((edge) => `${edge.from} → ${edge.to}`),
    [],
  );
});

test("each store area has one name: types/<area>.ts, core/<area>.ts and core/sql-<area>.ts", () => {
  const names = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".ts")).map((name) => name.slice(0, -".ts".length));
  const core = new Set(names("src/store/core"));
  const statementFiles = [...core].filter((name) => name.startsWith("sql-")).map((name) => name.slice("sql-".length));
  for (const area of names("src/store/types")) {
    assert.ok(core.has(area), `store/core/${area}.ts, as store/types/${area}.ts`);
    assert.ok(core.has(`sql-${area}`), `store/core/sql-${area}.ts, as store/types/${area}.ts`);
  }
  for (const area of statementFiles) assert.ok(core.has(area), `store/core/${area}.ts, as store/core/sql-${area}.ts`);
});

test(`no source file in src/ or bench/ is over ${MAX_LINES} lines`, () => {
  const long = [...files, ...sourceFiles("bench")]
    .filter((file) => !DATA_FILES.has(file.split(sep).join("/")))
    .map((file) => ({ file, lines: readFileSync(file, "utf8").split("\n").length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES);
  assert.deepEqual(long, []);
});
