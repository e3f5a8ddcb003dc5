#!/bin/sh
# The entry of work-item-api-postgres (SPEC §21: PostgreSQL for compose and the manifests' tests,
# an image built from Debian's postgresql-15 like the service's own). On the first start, with an
# empty data folder, it makes the cluster: POSTGRES_USER (default postgres) with POSTGRES_PASSWORD
# (required), password sign-in over the network (scram-sha-256), and the database POSTGRES_DB
# when one is named. Then, and on every start, PostgreSQL itself, on 5432 on every interface of
# the container, as PID 1's child under tini: SIGTERM is a smart shutdown.
set -eu
bin=/usr/lib/postgresql/15/bin
: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD: the password of POSTGRES_USER}"
  user="${POSTGRES_USER:-postgres}"
  password_file="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
  "$bin/initdb" --username="$user" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 > /dev/null
  rm -f "$password_file"
  printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
    printf 'CREATE DATABASE "%s" OWNER "%s"\n' "$POSTGRES_DB" "$user" | "$bin/postgres" --single -D "$PGDATA" postgres > /dev/null
  fi
  echo "postgres-entry: made the cluster in $PGDATA"
fi

# The local socket goes to /tmp: Debian's /run/postgresql is made at boot, which a container has not.
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c port=5432 -c unix_socket_directories=/tmp
