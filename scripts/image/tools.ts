/**
 * The programs the image build runs (mmdebstrap, buildah, podman, npm), each as a child whose
 * output goes to our stderr, so a long step shows what it does; a failure names the command.
 */
import { spawn } from "node:child_process";

export class ImageBuildError extends Error {
  override name = "ImageBuildError";
}

export interface Tools {
  /** buildah's and podman's global options: `--root`/`--runroot` when the build keeps its own store. */
  storage: string[];
  progress(line: string): void;
  run(command: string, args: string[], options?: { env?: Record<string, string>; cwd?: string; quiet?: boolean }): Promise<void>;
  /** A command's standard output (its stderr goes to ours). */
  output(command: string, args: string[], options?: { cwd?: string }): Promise<string>;
}

export function createTools(storage: string[], quiet: boolean): Tools {
  const started = Date.now();
  const spawnChild = (command: string, args: string[], options: { env?: Record<string, string>; cwd?: string; capture: boolean; quiet?: boolean }) =>
    new Promise<string>((resolve, reject) => {
      const shown = !quiet && options.quiet !== true;
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        // A step's own output is progress: on our stderr, so that stdout holds only the result.
        stdio: ["ignore", options.capture ? "pipe" : shown ? process.stderr : "ignore", shown ? "inherit" : "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("error", (error) =>
        reject(new ImageBuildError(`${command} could not be started (${error.message}); install it: apt-get install podman buildah mmdebstrap runc uidmap slirp4netns`)),
      );
      child.on("close", (code) => {
        if (code === 0) resolve(stdout);
        else reject(new ImageBuildError(`${command} ${args.slice(0, 3).join(" ")} … failed with exit code ${code}${stderr.trim() ? `: ${stderr.trim().split("\n").slice(-5).join(" | ")}` : ""}`));
      });
    });
  return {
    storage,
    progress: (line) => process.stderr.write(`[image ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
    run: async (command, args, options = {}) => void (await spawnChild(command, args, { ...options, capture: false })),
    output: (command, args, options = {}) => spawnChild(command, args, { ...options, capture: true }),
  };
}
