#!/usr/bin/env bash
# Install Alertmanager from Debian's package when it is not on PATH (the notification integration test runs
# it). The package may start its own systemd service; the tests never rely on that: they run the binary
# with their own config, storage directory and port, clustering disabled.
# Hook: `deploy/tools/install-alertmanager.sh` in `make install`.
set -euo pipefail

if command -v prometheus-alertmanager >/dev/null 2>&1; then
    echo "prometheus-alertmanager already installed: $(command -v prometheus-alertmanager)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO apt-get update
# DEBIAN_FRONTEND keeps debconf quiet; --no-install-recommends keeps unrelated packages out.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus-alertmanager

if [ ! -x /usr/bin/prometheus-alertmanager ]; then
    echo "install-alertmanager: /usr/bin/prometheus-alertmanager missing after apt-get install" >&2
    exit 1
fi
/usr/bin/prometheus-alertmanager --version 2>&1 | head -1
