#!/usr/bin/env bash
# Install PostgreSQL's server binaries from Debian's `postgresql` package when initdb/pg_ctl are not on
# PATH: the store's tests start their own throw-away server with them (tests/support/postgres.py, as an
# unprivileged user on 127.0.0.1), never the package's own service. Debian keeps them in
# /usr/lib/postgresql/<major>/bin, off PATH: they are linked into /usr/local/bin.
# Hook: `deploy/tools/install-postgresql.sh` in `make install`. Idempotent.
set -euo pipefail

if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    echo "postgresql already installed: $(command -v initdb) ($(initdb --version))"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

newest_bin() {
    # the highest major version installed, e.g. /usr/lib/postgresql/15/bin
    find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1
}

if [ -z "$(newest_bin)" ]; then
    $SUDO apt-get update
    # DEBIAN_FRONTEND keeps debconf quiet; --no-install-recommends keeps unrelated packages out.
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
fi

bin="$(newest_bin)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "install-postgresql: no initdb/pg_ctl under /usr/lib/postgresql/*/bin after apt-get install postgresql" >&2
    exit 1
fi
for tool in initdb pg_ctl postgres; do
    $SUDO ln -sf "$bin/$tool" "/usr/local/bin/$tool"
done
echo "postgresql installed: /usr/local/bin/initdb -> $bin/initdb ($("$bin/initdb" --version))"
