#!/usr/bin/env bash
# make bench: each Lambda function's size and start-up (.ci/bootbench): the
# arm64 bootstraps of make build for their sizes, the same bootstraps built
# for this host for their cold starts on the local Runtime API, at full CPU
# and under a cgroup CPU quota of Lambda's share at BOOT_MEMORY MB (256, the
# stack's), with the aws backend on moto (localstack/emulators.sh). Target:
# each init <= 60 ms at the share. Needs root for the cgroup (without it the
# share column is left out). Every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
export EMULATOR=moto EMULATOR_STATE=$WORK/emulators
mkdir -p "$EMULATOR_STATE"
cleanup() {
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

localstack/emulators.sh start
eval "$(localstack/emulators.sh env)"
MEMORY=${BOOT_MEMORY:-256}
# The Go runtime's settings as infra/function.go gives every function.
"$WORK/bootbench" -bin "$WORK/host" -sizes bin -runs "${BOOT_RUNS:-7}" -memory "$MEMORY" -period "${BOOT_PERIOD_US:-100000}" \
  -env "GOMEMLIMIT=$((MEMORY * 9 / 10))MiB" -env GOGC=200
