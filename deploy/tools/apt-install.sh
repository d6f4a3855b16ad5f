#!/usr/bin/env bash
# apt-install.sh BINARY PACKAGE: install Debian's PACKAGE when BINARY is not on PATH, then check that
# /usr/bin/BINARY exists. Used by the install-*.sh test-tool hooks of `make install`. Packages that start
# a systemd service of their own are never relied on: the tests run each binary with their own config,
# files and port.
set -euo pipefail

binary="$1"
package="$2"
if command -v "$binary" >/dev/null 2>&1; then
    echo "$package already installed: $(command -v "$binary")"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO apt-get update
# DEBIAN_FRONTEND keeps debconf quiet; --no-install-recommends keeps unrelated packages out.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package"

if [ ! -x "/usr/bin/$binary" ]; then
    echo "apt-install: /usr/bin/$binary missing after apt-get install $package" >&2
    exit 1
fi
