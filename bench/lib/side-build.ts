/**
 * Another revision's server, built with this checkout's harness: a copy of this checkout's
 * tracked files (bench, scripts, configs; node_modules linked) with that revision's src/, built
 * into its own dist/. Only the server differs, so a side-by-side run compares servers, not
 * harnesses.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runToEnd } from "../../scripts/lib/processes.ts";
import { ROOT } from "./setup.ts";

export interface SideBuild {
  /** The revision as given, and the commit it names. */
  revision: string;
  commit: string;
  /** The copy whose dist/ runs. */
  root: string;
  remove(): void;
}

const git = (args: string[]) => execFileSync("git", args, { cwd: ROOT, maxBuffer: 1 << 30 });

export async function buildRevision(revision: string, keep: boolean): Promise<SideBuild> {
  let commit: string;
  try {
    commit = git(["rev-parse", "--verify", "--quiet", `${revision}^{commit}`]).toString().trim();
  } catch {
    throw new Error(`--against ${revision}: no such commit in this repository`);
  }
  const root = mkdtempSync(join(tmpdir(), `bench-${commit.slice(0, 7)}-`));
  const remove = () => (keep ? undefined : rmSync(root, { recursive: true, force: true }));
  try {
    const tracked = git(["ls-files", "-z"]).toString().split("\0");
    for (const file of tracked) {
      if (!file || file.startsWith("src/") || !existsSync(join(ROOT, file))) continue;
      mkdirSync(dirname(join(root, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(root, file));
    }
    execFileSync("tar", ["-x", "-C", root], { input: git(["archive", "--format=tar", commit, "src"]) });
    symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
    await runToEnd("npm", ["run", "--silent", "build"], { cwd: root, env: { ...process.env, npm_config_loglevel: "error" } });
  } catch (error) {
    remove();
    throw new Error(`--against ${revision}: its src/ does not build with this checkout's configuration: ${(error as Error).message}`, { cause: error });
  }
  return { revision, commit, root, remove };
}
