#!/usr/bin/env bash
# Install Prometheus (and promtool) from Debian's package when it is not on PATH (the metrics integration
# test and the deploy rule checks run it). Hook: `deploy/tools/install-prometheus.sh` in `make install`.
set -euo pipefail
"$(dirname "$0")/apt-install.sh" prometheus prometheus
/usr/bin/prometheus --version | head -1
