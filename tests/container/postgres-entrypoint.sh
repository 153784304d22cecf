#!/bin/sh
# As the official postgres image starts: a new data volume is initialised with
# POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, then the server runs in the foreground.
set -eu
bin=/usr/lib/postgresql/15/bin
data=/var/lib/postgresql/data
as_postgres() { runuser -u postgres -- "$@"; }
mkdir -p "$data" /run/postgresql
chown postgres:postgres "$data" /run/postgresql
chmod 700 "$data"
if [ ! -s "$data/PG_VERSION" ]; then
    password=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password"
    chown postgres "$password"
    as_postgres "$bin/initdb" -D "$data" -U "$POSTGRES_USER" --pwfile="$password" \
        --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$password"
    echo "listen_addresses = '*'" >> "$data/postgresql.conf"
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$data/pg_hba.conf"
    as_postgres "$bin/pg_ctl" -D "$data" -o "-c listen_addresses=''" -w start >/dev/null
    as_postgres env PGPASSWORD="$POSTGRES_PASSWORD" "$bin/createdb" -U "$POSTGRES_USER" \
        -h /run/postgresql "$POSTGRES_DB"
    as_postgres "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
fi
exec runuser -u postgres -- "$bin/postgres" -D "$data"
