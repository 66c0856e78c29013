#!/usr/bin/env bash
# make bench: each Lambda function's size and start-up (.ci/bootbench): the
# arm64 bootstraps of make build for their sizes, the same bootstraps built
# for this host for their cold starts on the local Runtime API, at full CPU
# and under a cgroup CPU quota of Lambda's share at BOOT_MEMORY MB (256, the
# stack's), with the aws backend on moto (localstack/emulators.sh). Target:
# each init <= 60 ms at the share. Then the graphs function planning and
# deploying fuel-library's default graph on BOOT_PLAN_NODES nodes (1000; 0
# skips it), loaded by .ci/fuelscale through a local serve into an embedded
# store, against its timeout and its memory (BOOT_PLAN_MEMORY, 1024: the
# stack's). Needs root for the cgroup (without it the share is left out).
# Every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
export EMULATOR=moto EMULATOR_STATE=$WORK/emulators
mkdir -p "$EMULATOR_STATE"
SERVE_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null || true
  localstack/emulators.sh stop || true
  rm -rf "$WORK"
}
trap cleanup EXIT

make -s build >/dev/null
for fn in functions/*/; do
  fn=$(basename "$fn")
  CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags="-s -w" -o "$WORK/host/$fn/bootstrap" "./functions/$fn"
done
go build -o "$WORK/bootbench" ./.ci/bootbench

PLAN=()
PLAN_NODES=${BOOT_PLAN_NODES:-1000}
if [ "$PLAN_NODES" -gt 0 ]; then
  go build -o "$WORK/tuningbox" ./cmd/tuningbox
  go build -o "$WORK/fuelscale" ./.ci/fuelscale
  BASE="http://127.0.0.1:${BOOT_PORT:-18790}"
  ADMIN=bench PASSWORD=bench-fuelscale-secret
  TUNINGBOX_ADMIN_USER=$ADMIN TUNINGBOX_ADMIN_PASSWORD=$PASSWORD \
    "$WORK/tuningbox" serve --listen "${BASE#http://}" --data "$WORK/fuel" 2>/dev/null &
  SERVE_PID=$!
  for _ in $(seq 1 100); do curl -fs "$BASE/api/v1/config/" >/dev/null && break; sleep 0.1; done
  # Its own numbers are bench_graphs.sh's: here it loads the cluster.
  "$WORK/fuelscale" -nodes "$PLAN_NODES" -url "$BASE" -pid "$SERVE_PID" -user "$ADMIN" -password "$PASSWORD" -agents 0 >/dev/null
  # fuelscale leaves its deployment running, which would refuse the function's.
  for tx in $(curl -fs -u "$ADMIN:$PASSWORD" "$BASE/api/v1/transactions" |
    python3 -c 'import json, sys; print(" ".join(t["uuid"] for t in json.load(sys.stdin) if t["status"] == "running"))'); do
    curl -fs -o /dev/null -u "$ADMIN:$PASSWORD" -X POST "$BASE/api/v1/transactions/$tx/stop"
  done
  kill "$SERVE_PID" && wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=""
  PLAN=(-plan "$WORK/fuel")
fi

localstack/emulators.sh start
eval "$(localstack/emulators.sh env)"
# GOGC as infra/function.go gives every function (bootbench sets GOMEMLIMIT
# from the memory); the graphs function's memory is the stack's graphsMemoryMB.
"$WORK/bootbench" -bin "$WORK/host" -sizes bin -runs "${BOOT_RUNS:-7}" -memory "${BOOT_MEMORY:-256}" \
  -period "${BOOT_PERIOD_US:-100000}" -env GOGC=200 "${PLAN[@]}" -plan-memory "${BOOT_PLAN_MEMORY:-1024}"
