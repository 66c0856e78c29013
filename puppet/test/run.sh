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

# HIERA_TRANSPORT_ONLY=1 (the run through the local API Gateway) leaves out the
# YAML checks, which test parsing at import rather than the path an answer takes.
if [ -z "${HIERA_TRANSPORT_ONLY:-}" ]; then
  # shared/puppetyaml's table of Psych scalars, checked against Puppet's Ruby.
  TUNINGBOX_HIERA_TEST=1 ${GO:-go} test -count=1 -run TestScalarsAgainstRuby -v ./shared/puppetyaml/
  TUNINGBOX_HIERA_TEST=1 ${GO:-go} test -count=1 -v ./puppet/test/
else
  TUNINGBOX_HIERA_TEST=1 ${GO:-go} test -count=1 -v -skip '^TestYAMLAsPuppetReadsIt$' ./puppet/test/
fi
