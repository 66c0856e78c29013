#!/usr/bin/env bash
# Debian's python3-yaql (with python3-yaml), the reference engine shared/yaql's
# differential test runs beside its own; installed once, for /usr/bin/python3
# (the interpreter Debian's packages target), by make unit.
set -euo pipefail
if /usr/bin/python3 -c 'import yaql, yaml' 2>/dev/null; then
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
install() {
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    --no-install-recommends python3-yaql python3-yaml >/dev/null
}
# A fresh machine's package lists may not know the packages yet.
install || { "${sudo[@]}" apt-get update -qq -o DPkg::Lock::Timeout=600 && install; }
/usr/bin/python3 -c 'import yaql, yaml'
