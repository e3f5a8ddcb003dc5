/**
 * `npm run image [-- --output FILE] [--tag NAME] [--json]`: the service's OCI image (SPEC §21),
 * built from Debian's archive and the npm registry alone, into the local container store as
 * `work-item-api:<version>` and, with `--output`, an OCI archive. docs/deploy.md tells how to run it.
 *
 * Steps, each reported on stderr as it starts:
 * 1. the two base images, runtime and build (debian-rootfs.ts): mmdebstrap the first time, then
 *    from the cache;
 * 2. Node and npm from the registry, checked against deploy/image/versions.json;
 * 3. the context: those two, and the files of this checkout the build needs, as git tracks them;
 * 4. deploy/image/Containerfile with buildah: npm ci, better-sqlite3 compiled, the production
 *    build, the production dependencies; every file stamped with SOURCE_DATE_EPOCH (default: the
 *    commit's time), so two builds of one commit give one digest.
 *
 * `--postgres` and `--prometheus` build instead the images compose and the manifests' tests run
 * beside it, from Debian's packages: `work-item-api-postgres:15` (postgresql-15;
 * deploy/image/postgres-entry.sh) and `work-item-api-prometheus:2` (prometheus).
 *
 * Options: `--cache DIR` keeps root file systems and registry packages between builds (default
 * ~/.cache/work-item-api-image); `--root DIR --runroot DIR` use a container store of their own
 * (the tests do); `--ca FILE` is the CA bundle npm trusts inside the build, as a build secret
 * (default: NODE_EXTRA_CA_CERTS, or the machine's bundle), for a TLS-intercepting proxy.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { baseImage, companionImage, type CompanionKind } from "./debian-rootfs.ts";
import { registryPackage, type PinnedPackage } from "./registry-package.ts";
import { createTools, ImageBuildError } from "./tools.ts";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** What the build stage needs of this checkout (deploy/image/Containerfile). */
const BUILD_INPUTS = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "src", "scripts/copy-sql.mjs", "deploy/image"];

interface Versions {
  debianSuite: string;
  baseDateEpoch: number;
  node: PinnedPackage;
  npm: PinnedPackage;
}

export interface ImageBuildResult {
  image: string;
  /** The image's id: the digest of its configuration, which names every layer; equal ids, equal images. */
  id: string;
  sizeBytes: number;
  output: string | null;
  sourceDateEpoch: number;
}

const USAGE = "usage: npm run image [-- --output FILE] [--tag NAME] [--postgres | --prometheus] [--cache DIR] [--root DIR --runroot DIR] [--ca FILE] [--json]";
const COMPANION_TAGS: Record<CompanionKind, string> = { postgres: "work-item-api-postgres:15", prometheus: "work-item-api-prometheus:2" };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      output: { type: "string" },
      tag: { type: "string" },
      cache: { type: "string" },
      root: { type: "string" },
      runroot: { type: "string" },
      ca: { type: "string" },
      json: { type: "boolean" },
      postgres: { type: "boolean" },
      prometheus: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if ((values.root === undefined) !== (values.runroot === undefined)) throw new ImageBuildError("--root and --runroot go together");
  const storage = values.root === undefined ? [] : ["--root", resolve(values.root), "--runroot", resolve(values.runroot!)];
  const tools = createTools(storage, false);
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string; repository?: { url?: string } | string };
  const versions = JSON.parse(readFileSync(join(REPO_ROOT, "deploy/image/versions.json"), "utf8")) as Versions;
  if (values.postgres && values.prometheus) throw new ImageBuildError("--postgres or --prometheus: one image a build");
  const companion: CompanionKind | undefined = values.postgres ? "postgres" : values.prometheus ? "prometheus" : undefined;
  const tag = values.tag ?? (companion ? COMPANION_TAGS[companion] : `work-item-api:${pkg.version}`);
  const cache = resolve(values.cache ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "work-item-api-image"));
  mkdirSync(cache, { recursive: true });
  const git = (args: string[]) => tools.output("git", ["-C", REPO_ROOT, ...args]).then((text) => text.trim());
  const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? (await git(["log", "-1", "--format=%ct"])));
  if (!Number.isInteger(epoch) || epoch <= 0) throw new ImageBuildError(`SOURCE_DATE_EPOCH must be whole seconds since 1970, got ${process.env.SOURCE_DATE_EPOCH}`);

  const output = values.output === undefined ? null : resolve(values.output);
  /** Writes the archive when asked, and reports the image: its id and size. */
  const finish = async (sourceDateEpoch: number) => {
    if (output !== null) {
      tools.progress(`writing the OCI archive ${output}`);
      rmSync(output, { force: true });
      await tools.run("buildah", [...storage, "push", "--quiet", tag, `oci-archive:${output}:${tag}`]);
    }
    const [inspected] = JSON.parse(await tools.output("podman", [...storage, "image", "inspect", tag])) as Array<{ Id: string; Size: number }>;
    const result: ImageBuildResult = { image: tag, id: `sha256:${inspected!.Id}`, sizeBytes: inspected!.Size, output, sourceDateEpoch };
    tools.progress(`done: ${tag} ${result.id.slice(0, 19)}…, ${(result.sizeBytes / 1e6).toFixed(0)} MB`);
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${tag} ${result.id} ${(result.sizeBytes / 1e6).toFixed(0)} MB${output ? ` ${output}` : ""}\n`);
  };
  if (companion) {
    tools.progress(`building ${tag} from Debian's ${companion} package`);
    await companionImage(companion, tag, versions.debianSuite, versions.baseDateEpoch, cache, tools);
    return finish(versions.baseDateEpoch);
  }

  tools.progress(`building ${tag} at SOURCE_DATE_EPOCH=${epoch} (${new Date(epoch * 1000).toISOString()})`);
  const runtime = await baseImage("runtime", versions.debianSuite, versions.baseDateEpoch, cache, tools);
  const build = await baseImage("build", versions.debianSuite, versions.baseDateEpoch, cache, tools);
  const nodeTarball = await registryPackage(versions.node, cache, tools);
  const npmTarball = await registryPackage(versions.npm, cache, tools);

  const context = mkdtempSync(join(tmpdir(), "wia-image-context-"));
  try {
    tools.progress("context: Node, npm and this checkout's tracked build inputs");
    for (const [name, tarball] of [["node", nodeTarball], ["npm", npmTarball]] as const) {
      mkdirSync(join(context, name));
      await tools.run("tar", ["-xzf", tarball, "--strip-components=1", "--no-same-owner", "-C", join(context, name)]);
    }
    const tracked = (await tools.output("git", ["-C", REPO_ROOT, "ls-files", "-z", "--", ...BUILD_INPUTS])).split("\0").filter(Boolean);
    for (const file of tracked) cpSync(join(REPO_ROOT, file), join(context, "app", file));
    const ca = values.ca ?? process.env.NODE_EXTRA_CA_CERTS ?? "/etc/ssl/certs/ca-certificates.crt";
    const caSecret = existsSync(ca) ? resolve(ca) : join(context, "no-extra-ca.pem");
    if (!existsSync(caSecret)) writeFileSync(caSecret, "");

    tools.progress("build: npm ci, better-sqlite3 compiled, the production build (several minutes from a cold cache)");
    const revision = await git(["rev-parse", "HEAD"]);
    const source = typeof pkg.repository === "string" ? pkg.repository : (pkg.repository?.url ?? "");
    await tools.run("buildah", [
      ...storage,
      "bud",
      "--quiet",
      "--isolation=chroot",
      "--network=host",
      "--timestamp",
      String(epoch),
      "--secret",
      `id=ca,src=${caSecret}`,
      "--build-arg",
      `BUILD_BASE=${build.name}`,
      "--build-arg",
      `RUNTIME_BASE=${runtime.name}`,
      "--build-arg",
      `VERSION=${pkg.version}`,
      "--build-arg",
      `REVISION=${revision}`,
      "--build-arg",
      `CREATED=${new Date(epoch * 1000).toISOString()}`,
      "--build-arg",
      `SOURCE=${source}`,
      "--file",
      join(context, "app/deploy/image/Containerfile"),
      "--tag",
      tag,
      context,
    ]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }

  await finish(epoch);
}

main().catch((error: unknown) => {
  process.stderr.write(`npm run image: ${error instanceof Error ? error.message : String(error)}\n`);
  if (!(error instanceof ImageBuildError)) process.stderr.write(`${USAGE}\n`);
  process.exit(error instanceof ImageBuildError ? 1 : 2);
});
