#!/usr/bin/env bash
# End-to-end test of deployment graph execution (agent/test): installs
# Debian's puppet-agent when Puppet is missing, then runs the Go test that
# starts `tuningbox serve` on 127.0.0.1 and three `tuningbox agent` processes.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v puppet >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends puppet-agent
fi

TUNINGBOX_AGENT_TEST=1 ${GO:-go} test -count=1 -v -timeout 15m ./agent/test/
