#!/usr/bin/env bash
# Install Alertmanager from Debian's package when it is not on PATH (the notification integration test
# runs it, clustering disabled). Hook: `deploy/tools/install-alertmanager.sh` in `make install`.
set -euo pipefail
"$(dirname "$0")/apt-install.sh" prometheus-alertmanager prometheus-alertmanager
/usr/bin/prometheus-alertmanager --version 2>&1 | head -1
