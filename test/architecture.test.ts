/**
 * The house as docs/architecture.md draws it, checked on the code's own imports: the rooms of
 * src/ (a folder, or a file directly in src/) import one another without a circle, each on the
 * floor the page gives it, the bottom rooms import no other, the simulator never the bot, the SDK
 * nothing of the server but types; the page names only paths that exist, every room, every file
 * of the bot and every store area; and no source file of src/, bench/ or scripts/ grows past 400
 * lines.
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

const ARCHITECTURE = readFileSync("docs/architecture.md", "utf8");

/** The part of the page under a heading, up to the next heading of any level. */
function section(heading: string): string {
  const start = ARCHITECTURE.indexOf(`${heading}\n`);
  assert.ok(start >= 0, `docs/architecture.md has "${heading}"`);
  const rest = ARCHITECTURE.slice(start + heading.length + 1);
  return rest.slice(0, rest.search(/^#/m) === -1 ? undefined : rest.search(/^#/m));
}

/** The backticked names in a table cell. */
const named = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);

/** A room's floor: 0 when it imports no other room, else one above the highest room it imports. */
const floors = new Map<string, number>();
function floorOf(room: string): number {
  if (!floors.has(room)) floors.set(room, Math.max(-1, ...[...(graph.get(room) ?? [])].map(floorOf)) + 1);
  return floors.get(room)!;
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

test(`no source file in src/, bench/ or scripts/ is over ${MAX_LINES} lines`, () => {
  const long = [...files, ...sourceFiles("bench"), ...sourceFiles("scripts")]
    .filter((file) => !DATA_FILES.has(file.split(sep).join("/")))
    .map((file) => ({ file, lines: readFileSync(file, "utf8").split("\n").length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES);
  assert.deepEqual(long, []);
});

test("docs/architecture.md's rooms table has every room of src/, each on the floor its imports give it", () => {
  const drawn = new Map<string, number>();
  for (const [, floor, rooms] of section("## The rooms, top to bottom").matchAll(/^\| (\d+) \| ([^|]+) \|/gm)) {
    for (const room of named(rooms!)) drawn.set(room.replace(/\/$/, ""), Number(floor));
  }
  const rooms = readdirSync("src").filter((name) => statSync(join("src", name)).isDirectory() || /\.(ts|mjs)$/.test(name));
  const actual = new Map(rooms.map((room) => [room, floorOf(room)]));
  const sorted = (map: Map<string, number>) => [...map].sort(([a], [b]) => (a < b ? -1 : 1));
  assert.deepEqual(sorted(drawn), sorted(actual));
});

/** Every file and folder of the repository (folders with a trailing slash), as paths from its root. */
function repositoryPaths(dir = "."): string[] {
  return readdirSync(dir).flatMap((name) => {
    if ([".git", "node_modules", "dist"].includes(name)) return [];
    const path = dir === "." ? name : `${dir}/${name}`;
    return statSync(path).isDirectory() ? [`${path}/`, ...repositoryPaths(path)] : [path];
  });
}

test("every path docs/architecture.md names exists", () => {
  const paths = repositoryPaths();
  // A path from the root, from src/, or the end of a longer one (`core/` of store/, a file by its name).
  const exists = (name: string) => paths.some((path) => path === name || path === `src/${name}` || path.endsWith(`/${name}`));
  const names = named(ARCHITECTURE).filter((name) => /\/|\.(ts|mjs|sql|md|json)$/.test(name) && !/[<>*…\s]|^[@/]/.test(name));
  assert.ok(names.length > 50, "the page's paths were found");
  assert.deepEqual(names.filter((name) => !exists(name)), []);
});

test("docs/architecture.md names every file of the bot, and every store area in its table", () => {
  const bot = readdirSync("src/bot").map((name) => `bot/${name}`);
  const botTable = named(section("### The bot")).flatMap((name) => name.split(", "));
  assert.deepEqual(bot.filter((file) => !botTable.includes(file)), []);
  const areas = [...readdirSync("src/store/types").map((name) => name.replace(/\.ts$/, "")), "batches", "transition"];
  const areaTable = [...section("### The store's areas").matchAll(/^\| `([\w-]+)`/gm)].map((match) => match[1]!);
  assert.deepEqual([...areaTable].sort(), [...areas].sort());
});
