#!/usr/bin/env bash
# Install Chromium from Debian's package when it is not on PATH: the console's browser tests
# (tests/service/ui) and bench/console drive /usr/bin/chromium headless with Playwright (Playwright's own
# browser download fails here and is never used). Hook: `deploy/tools/install-chromium.sh` in `make install`.
set -euo pipefail
"$(dirname "$0")/apt-install.sh" chromium chromium
