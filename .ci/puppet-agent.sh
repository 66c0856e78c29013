#!/usr/bin/env bash
# Debian's puppet-agent, for the Ruby it brings: shared/graphs' differential
# test runs Astute's deployment engine on it. Installed once, by make unit.
set -euo pipefail
if command -v ruby >/dev/null 2>&1; then
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
install() {
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    --no-install-recommends puppet-agent >/dev/null
}
# A fresh machine's package lists may not know the package yet.
install || { "${sudo[@]}" apt-get update -qq -o DPkg::Lock::Timeout=600 && install; }
ruby -e 'exit 0'
