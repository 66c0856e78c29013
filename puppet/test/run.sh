#!/usr/bin/env bash
# Real-Puppet test of tuningbox's Hiera 5 backend (puppet/tuningbox): installs
# Debian's puppet-agent when Puppet is missing, then runs the Go test that
# starts `tuningbox serve` on 127.0.0.1, seeds it, and runs `puppet lookup`;
# and the YAML differential test: the same tree through Puppet's own yaml_data
# and through tuningbox after `config import`.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v puppet >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends puppet-agent
fi

# shared/puppetyaml's table of Psych scalars, checked against Puppet's Ruby.
TUNINGBOX_HIERA_TEST=1 ${GO:-go} test -count=1 -run TestScalarsAgainstRuby -v ./shared/puppetyaml/
TUNINGBOX_HIERA_TEST=1 ${GO:-go} test -count=1 -v ./puppet/test/
