#!/usr/bin/env bash
# The console in a real browser (console/test): installs Debian's chromium
# when it is missing, then runs the Go test that starts `tuningbox serve` on
# 127.0.0.1 with 1,000 nodes and drives headless chromium through chromedp.
# Screenshots of each view go to console/test/artifacts/ (gitignored), or to
# TUNINGBOX_CONSOLE_ARTIFACTS (docs/console refreshes the README's).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v chromium >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends chromium
fi

if [ -n "${TUNINGBOX_CONSOLE_ARTIFACTS:-}" ]; then
  TUNINGBOX_CONSOLE_ARTIFACTS=$(realpath -m "$TUNINGBOX_CONSOLE_ARTIFACTS")
  export TUNINGBOX_CONSOLE_ARTIFACTS
fi
TUNINGBOX_CONSOLE_TEST=1 ${GO:-go} test -count=1 -v -timeout 5m ./console/test/
