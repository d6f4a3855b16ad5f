#!/usr/bin/env bash
# Install Chromium from Debian's package when /usr/bin/chromium is missing: the console's browser tests
# (tests/service/ui) drive it headless with Playwright (a browser download by Playwright fails here, so
# the tests point Playwright at this binary and never run `playwright install`).
# Hook: `deploy/tools/install-chromium.sh` in `make install`.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium already installed: /usr/bin/chromium"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium

if [ ! -x /usr/bin/chromium ]; then
    echo "install-chromium: /usr/bin/chromium missing after apt-get install" >&2
    exit 1
fi
