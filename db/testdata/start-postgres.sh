#!/usr/bin/env bash
# start-postgres.sh starts a private, throwaway PostgreSQL server on loopback
# for the db package's tests and prints the DSN to use:
#
#   eval "$(bash db/testdata/start-postgres.sh)"   # exports CONCORD_TEST_POSTGRES_DSN
#   go test ./db/...
#
# It installs the Debian package when PostgreSQL is missing, creates a cluster
# in $CONCORD_PG_DIR (default /tmp/concord-pg) owned by the postgres user,
# listening on 127.0.0.1:$CONCORD_PG_PORT (default 55432) with trust
# authentication (test use only), and a database concord_test owned by the
# role concord. Running it again while the server is up only prints the DSN.
# Stop it with: runuser -u postgres -- "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl" -D /tmp/concord-pg/data stop
set -euo pipefail

dir=${CONCORD_PG_DIR:-/tmp/concord-pg}
port=${CONCORD_PG_PORT:-55432}

if ! ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { runuser -u postgres -- "$@"; }

mkdir -p "$dir"
chown postgres: "$dir"
if [ ! -s "$dir/data/PG_VERSION" ]; then
	as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >&2
fi
if ! as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
	as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >&2
fi
psql=("$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1 -qAt)
if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'concord'")" != 1 ]; then
	"${psql[@]}" -c "CREATE ROLE concord LOGIN" >&2
fi
if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'concord_test'")" != 1 ]; then
	"${psql[@]}" -c "CREATE DATABASE concord_test OWNER concord" >&2
fi
echo "export CONCORD_TEST_POSTGRES_DSN='postgres://concord@127.0.0.1:$port/concord_test?sslmode=disable'"
