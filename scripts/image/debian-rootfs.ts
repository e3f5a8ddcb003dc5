/**
 * The image's two base root file systems (SPEC §21), made from Debian's archive with mmdebstrap
 * and imported into the container store as base images: no base comes from an image registry.
 * - `runtime`: Debian minbase with tini, the CA bundle and time zones, the service's user
 *   (10001) and its data folder; no docs, manual pages, locales or iconv modules, and no apt
 *   (the image is rebuilt, never upgraded in place), which leaves about 60 MB.
 * - `build`: minbase with python3, make and g++, to compile better-sqlite3.
 * - the companions compose and the manifests' tests run beside the service (companionImage),
 *   each a whole image as Debian packages it:
 *   - `postgres`: minbase with postgresql-15 and tini, without the cluster Debian makes on
 *     install; deploy/image/postgres-entry.sh makes one in the data folder on the first start;
 *   - `prometheus`: minbase with prometheus (and promtool) and tini.
 * Both are reproducible: their files carry a fixed time (deploy/image/versions.json's
 * baseDateEpoch, as SOURCE_DATE_EPOCH to mmdebstrap and to the import), so the same packages make
 * the same bytes, whatever the commit. A tarball is kept in the cache under a key of everything
 * else that makes it, so a rebuild skips mmdebstrap, for a week: then it is made anew, with the
 * archive's security updates.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tools } from "./tools.ts";

export type CompanionKind = "postgres" | "prometheus";
export type RootfsKind = "runtime" | "build" | CompanionKind;

const UNUSED_PATHS = [
  "/usr/share/doc/*",
  "/usr/share/man/*",
  "/usr/share/info/*",
  "/usr/share/locale/*",
  "/usr/share/lintian/*",
  "/usr/lib/x86_64-linux-gnu/gconv/*",
];

/** The data folder and its owner, the service's user: the image's USER and VOLUME (deploy/image/Containerfile). */
export const SERVICE_UID = 10001;
export const DATA_FOLDER = "/var/lib/work-item-api";

/** PostgreSQL's data folder in its image, and the entry that makes the cluster there. */
const POSTGRES_DATA = "/var/lib/postgresql/data";
const POSTGRES_ENTRY = fileURLToPath(new URL("../../deploy/image/postgres-entry.sh", import.meta.url));
const PROMETHEUS_DATA = "/var/lib/prometheus";

/** How each companion's root file system becomes an image: `buildah config` of what Debian installed. */
const COMPANIONS: Record<CompanionKind, { title: string; user: string; env: string[]; port: number; volume: string; entrypoint: string[]; cmd: string[] }> = {
  postgres: {
    title: "work-item-api-postgres",
    user: "postgres",
    env: [`PGDATA=${POSTGRES_DATA}`],
    port: 5432,
    volume: POSTGRES_DATA,
    entrypoint: ["/usr/bin/tini", "--", "/usr/local/bin/postgres-entry.sh"],
    cmd: [],
  },
  prometheus: {
    title: "work-item-api-prometheus",
    user: "prometheus",
    env: [],
    port: 9090,
    volume: PROMETHEUS_DATA,
    entrypoint: ["/usr/bin/tini", "--", "/usr/bin/prometheus"],
    cmd: ["--config.file=/etc/prometheus/prometheus.yml", `--storage.tsdb.path=${PROMETHEUS_DATA}`, "--web.listen-address=:9090"],
  },
};

/** How long a root file system stays in the cache before it is made anew from the archive. */
const CACHE_DAYS = 7;

function mmdebstrapArguments(kind: RootfsKind): string[] {
  const common = [
    "--variant=minbase",
    // Merged /usr without the usrmerge package, which would pull perl in.
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    ...UNUSED_PATHS.map((path) => `--dpkgopt=path-exclude=${path}`),
    // The licences stay.
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
  ];
  if (kind === "build") return [...common, "--include=ca-certificates,python3,make,g++"];
  if (kind === "prometheus") {
    return [...common, "--include=prometheus,tini", `--customize-hook=chroot "$1" install -d -m 0700 -o prometheus -g prometheus ${PROMETHEUS_DATA}`];
  }
  if (kind === "postgres") {
    return [
      ...common,
      "--include=postgresql-15,tini",
      `--customize-hook=chroot "$1" pg_dropcluster 15 main`,
      // In the chroot: the postgres user is the image's, not the machine's.
      `--customize-hook=chroot "$1" install -d -m 0700 -o postgres -g postgres ${POSTGRES_DATA}`,
      `--customize-hook=copy-in ${POSTGRES_ENTRY} /usr/local/bin`,
    ];
  }
  return [
    ...common,
    "--include=ca-certificates,tzdata,tini",
    `--customize-hook=chroot "$1" groupadd --gid ${SERVICE_UID} work-item-api`,
    `--customize-hook=chroot "$1" useradd --no-log-init --uid ${SERVICE_UID} --gid ${SERVICE_UID} --no-create-home --home-dir ${DATA_FOLDER} --shell /usr/sbin/nologin work-item-api`,
    `--customize-hook=install -d -m 0700 -o ${SERVICE_UID} -g ${SERVICE_UID} "$1${DATA_FOLDER}"`,
    // apt goes, and what only it needed; Node needs libstdc++ and libgcc, which apt would take along.
    // apt counts itself essential; dpkg, which knows, does not.
    `--customize-hook=chroot "$1" apt-mark manual libstdc++6 libgcc-s1 >/dev/null`,
    `--customize-hook=chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq --allow-remove-essential --autoremove apt e2fsprogs >/dev/null`,
  ];
}

/** The machine's own Debian sources: the archive mmdebstrap downloads from (a mirror, or a proxy of one). */
export function debianSources(): string[] {
  const folder = "/etc/apt/sources.list.d";
  const files = [
    ...(existsSync("/etc/apt/sources.list") && readFileSync("/etc/apt/sources.list", "utf8").trim() !== "" ? ["/etc/apt/sources.list"] : []),
    ...(existsSync(folder) ? readdirSync(folder).filter((name) => /\.(list|sources)$/.test(name)).map((name) => join(folder, name)) : []),
  ];
  if (files.length === 0) throw new Error("this machine has no Debian sources (/etc/apt/sources.list or /etc/apt/sources.list.d/*.sources) for mmdebstrap to download from");
  return files;
}

export interface BaseImage {
  kind: RootfsKind;
  /** The name it has in the container store, with the key of what made it. */
  name: string;
}

/** The base image of `kind`, imported from its tarball (seconds), which is made with mmdebstrap first when the cache has none of this week. */
export async function baseImage(kind: RootfsKind, suite: string, epoch: number, cache: string, tools: Tools): Promise<BaseImage> {
  const sources = debianSources();
  const args = mmdebstrapArguments(kind);
  const key = createHash("sha256")
    .update(JSON.stringify({ kind, suite, epoch, args, sources: sources.map((file) => readFileSync(file, "utf8")), copiedIn: kind === "postgres" ? readFileSync(POSTGRES_ENTRY, "utf8") : "" }))
    .digest("hex")
    .slice(0, 16);
  const name = `localhost/work-item-api-base:${kind}-${key}`;
  const tarball = join(cache, `rootfs-${kind}-${key}.tar`);
  const fresh = existsSync(tarball) && Date.now() - statSync(tarball).mtimeMs < CACHE_DAYS * 86_400_000;
  if (fresh) tools.progress(`${kind} root file system: cached (${tarball})`);
  else {
    tools.progress(`${kind} root file system: mmdebstrap ${suite} (a few minutes the first time)`);
    const partial = `${tarball}.partial-${process.pid}`;
    await tools.run("mmdebstrap", ["--quiet", "--format=tar", ...args, suite, partial, ...sources], { env: { SOURCE_DATE_EPOCH: String(epoch) } });
    renameSync(partial, tarball);
  }
  tools.progress(`${kind} base image: importing as ${name}`);
  const container = (await tools.output("buildah", [...tools.storage, "from", "scratch"])).trim();
  try {
    await tools.run("buildah", [...tools.storage, "add", container, tarball, "/"]);
    await tools.run("buildah", [...tools.storage, "commit", "--quiet", "--timestamp", String(epoch), container, name]);
  } finally {
    await tools.run("buildah", [...tools.storage, "rm", container]).catch(() => undefined);
  }
  return { kind, name };
}

/**
 * A companion's image: its root file system as it is, with its entry, user, port and volume set
 * on the import; reproducible like the base images.
 */
export async function companionImage(kind: CompanionKind, tag: string, suite: string, epoch: number, cache: string, tools: Tools): Promise<void> {
  const companion = COMPANIONS[kind];
  const base = await baseImage(kind, suite, epoch, cache, tools);
  const container = (await tools.output("buildah", [...tools.storage, "from", base.name])).trim();
  try {
    await tools.run("buildah", [
      ...tools.storage,
      "config",
      "--user",
      companion.user,
      ...companion.env.flatMap((variable) => ["--env", variable]),
      "--port",
      String(companion.port),
      "--volume",
      companion.volume,
      "--entrypoint",
      JSON.stringify(companion.entrypoint),
      "--cmd",
      companion.cmd.length === 0 ? "" : JSON.stringify(companion.cmd),
      "--label",
      `org.opencontainers.image.title=${companion.title}`,
      container,
    ]);
    await tools.run("buildah", [...tools.storage, "commit", "--quiet", "--timestamp", String(epoch), container, tag]);
  } finally {
    await tools.run("buildah", [...tools.storage, "rm", container]).catch(() => undefined);
  }
}
