#!/usr/bin/env bash
# Install Prometheus from Debian's package when it is not on PATH (the metrics integration test runs it).
# The package may start its own systemd service; the tests never rely on that: they run the binary with
# their own config, storage directory and port. Hook: `deploy/tools/install-prometheus.sh` in `make install`.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
    echo "prometheus already installed: $(command -v prometheus)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO apt-get update
# policy-rc.d-free: DEBIAN_FRONTEND keeps debconf quiet; --no-install-recommends keeps the node exporter etc. out.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus

if [ ! -x /usr/bin/prometheus ]; then
    echo "install-prometheus: /usr/bin/prometheus missing after apt-get install" >&2
    exit 1
fi
/usr/bin/prometheus --version | head -1
