#!/usr/bin/env bash
# The contention run (part of make bench): 32 writers x 20 key batches on one
# 12 KB document, on DynamoDB Local + versitygw started here (127.0.0.1 only,
# stopped by PID on exit) and on the embedded store.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=$(mktemp -d)
cleanup() {
  EMULATOR=local EMULATOR_STATE=$STATE localstack/emulators.sh stop || true
  rm -rf "$STATE"
}
trap cleanup EXIT
EMULATOR=local EMULATOR_STATE=$STATE localstack/emulators.sh start
eval "$(EMULATOR=local EMULATOR_STATE=$STATE localstack/emulators.sh env)"
TUNINGBOX_CONTENTION=1 go test -p 1 -count=1 -run 'TestContentionRun' -v ./localstack/ ./shared/configdb/ 2>&1 |
  grep -E '^(--- |ok|FAIL|panic)|contention|gc' || true
