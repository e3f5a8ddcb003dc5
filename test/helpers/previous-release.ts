/**
 * The previous release (releases.json), checked out and installed once per machine, for the
 * rolling-upgrade test: its own tree, from git, in a cache folder that outlives a clone
 * ($XDG_CACHE_HOME or ~/.cache, work-item-api/releases/<commit>).
 *
 * Installing is the slow part. When every package the release's lockfile installs is installed
 * by this checkout's at the same place and version, the release's node_modules is a link to this
 * checkout's: it finds there exactly what its own `npm ci` would have put there. Otherwise it gets
 * its own `npm ci`, kept with the cache.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, runToEnd } from "../../scripts/lib/processes.ts";

export interface Release {
  version: string;
  commit: string;
  lastMigration: number;
}

export interface InstalledRelease extends Release {
  /** The release's tree, installed: start its processes with `cwd` set here. */
  root: string;
}

const git = (args: string[]) => execFileSync("git", args, { cwd: REPO_ROOT, maxBuffer: 1 << 30 });

/** The newest release in releases.json: the one the current code is rolled out over. */
export function previousRelease(): Release {
  const { releases } = JSON.parse(readFileSync(join(REPO_ROOT, "releases.json"), "utf8")) as { releases: Release[] };
  const newest = releases.at(-1);
  if (!newest) throw new Error("releases.json lists no release");
  return newest;
}

type LockedPackages = Record<string, { version?: string; integrity?: string }>;

/** The packages a lockfile installs, by place, without the root package's own entry. */
function installedPackages(lockfile: string): LockedPackages {
  const { packages } = JSON.parse(lockfile) as { packages: LockedPackages };
  return Object.fromEntries(Object.entries(packages).filter(([path]) => path !== ""));
}

/** Whether `ours` installs each of `theirs` at the same place, version and content. */
function installsAllOf(ours: LockedPackages, theirs: LockedPackages): boolean {
  return Object.entries(theirs).every(([path, locked]) => ours[path]?.version === locked.version && ours[path]?.integrity === locked.integrity);
}

export async function installRelease(release: Release, progress: (line: string) => void = () => undefined): Promise<InstalledRelease> {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "work-item-api", "releases");
  const sharesPackages = installsAllOf(
    installedPackages(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")),
    installedPackages(git(["show", `${release.commit}:package-lock.json`]).toString()),
  );
  // A linked and an installed copy are kept apart: which one fits changes with this checkout's lockfile.
  const root = join(cache, `${release.commit}-${sharesPackages ? "linked" : "installed"}`);
  if (!existsSync(join(root, ".installed"))) {
    progress(`checking out release ${release.version} (${release.commit.slice(0, 7)}) into ${root}`);
    // Built beside its place and renamed into it, so a run killed half-way leaves no broken cache.
    const staging = `${root}.${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    execFileSync("tar", ["-x", "-C", staging], { input: git(["archive", "--format=tar", release.commit]), maxBuffer: 1 << 30 });
    if (!sharesPackages) {
      progress(`installing release ${release.version}'s packages (npm ci, once per machine)`);
      await runToEnd("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: staging, env: { ...process.env, npm_config_loglevel: "error" } });
    }
    writeFileSync(join(staging, ".installed"), `${new Date().toISOString()}\n`);
    rmSync(root, { recursive: true, force: true });
    renameSync(staging, root);
  }
  if (sharesPackages) linkNodeModules(root);
  return { ...release, root };
}

/** Points the release's node_modules at this checkout's; the cache may have been linked to an earlier clone. */
function linkNodeModules(root: string): void {
  const link = join(root, "node_modules");
  const target = join(REPO_ROOT, "node_modules");
  let current: string | undefined;
  try {
    current = readlinkSync(link);
  } catch {
    current = undefined;
  }
  if (current === target) return;
  rmSync(link, { recursive: true, force: true });
  symlinkSync(target, link, "dir");
}
