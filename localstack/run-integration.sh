#!/usr/bin/env bash
# The integration run (`make integration`): for each emulator set, start it, start
# `tuningbox serve --backend aws` against it, run the integration tests of localstack/
# (store contract suite, fault injection, call counts, HTTP black-box suite), stop
# everything by PID. Everything listens on and talks to 127.0.0.1 only.
#
#   EMULATORS="local moto" (default) - DynamoDB Local + versitygw, then moto
#   AWS_ENDPOINT_URL=http://127.0.0.1:4566 - run once against emulators already
#                                           running there (LocalStack, see README.md)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUN=$(mktemp -d "${TMPDIR:-/tmp}/tuningbox-integration.XXXXXX")
started=() # emulator sets to stop on exit (stopping twice is harmless)

log() { echo "integration: $*" >&2; }

cleanup() {
  local status=$?
  stop_serve
  local emu
  for emu in "${started[@]}"; do
    EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh stop || status=1
  done
  rm -rf "$RUN"
  exit $status
}
trap cleanup EXIT

stop_serve() {
  if [ -f "$RUN/serve.pid" ]; then
    local pid
    pid=$(<"$RUN/serve.pid")
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    rm -f "$RUN/serve.pid"
  fi
}

elapsed() { echo $((SECONDS - $1))s; }

# run_suite NAME: with the AWS_* environment of an emulator set, start the server
# on a fresh table and bucket and run the Go integration tests against both.
run_suite() {
  local name=$1 t0=$SECONDS port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local password
  password=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
  TUNINGBOX_TABLE=tuningbox-bb-$name TUNINGBOX_BUCKET=tuningbox-bb-$name \
    TUNINGBOX_ADMIN_USER=integration TUNINGBOX_ADMIN_PASSWORD=$password \
    "$RUN/tuningbox" serve --backend aws --create-resources --s3-path-style --listen "127.0.0.1:$port" \
    >"$RUN/serve-$name.log" 2>&1 &
  echo $! >"$RUN/serve.pid"
  local pid=$! ready=
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then ready=1 && break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$ready" ]; then
    log "tuningbox serve did not start; its log:"
    cat "$RUN/serve-$name.log" >&2
    return 1
  fi
  log "[$name] tuningbox serve --backend aws on 127.0.0.1:$port (pid $pid)"
  local status=0
  TUNINGBOX_URL=http://127.0.0.1:$port TUNINGBOX_USER=integration TUNINGBOX_PASSWORD=$password \
    go test -count=1 -v ./localstack/ >"$RUN/test-$name.log" 2>&1 || status=$?
  stop_serve
  # Top-level results and the measured numbers; DynamoDB Local's error responses lack
  # the CRC32 header the SDK checks, which only makes it log a warning.
  grep -E '^(--- |ok|FAIL|panic)|(calls|took):' "$RUN/test-$name.log" >&2 || true
  if [ "$status" -ne 0 ]; then
    log "[$name] FAILED after $(elapsed "$t0"); test output and server log:"
    grep -v 'WARN failed to close HTTP response body' "$RUN/test-$name.log" | tail -n 80 >&2
    tail -n 30 "$RUN/serve-$name.log" >&2
    return 1
  fi
  log "[$name] passed: $(grep -c -- '--- PASS' "$RUN/test-$name.log") tests and subtests in $(elapsed "$t0")"
}

t_all=$SECONDS
go build -o "$RUN/tuningbox" ./cmd/tuningbox
log "built tuningbox in $(elapsed "$t_all")"

if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
  export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}
  export AWS_REGION=${AWS_REGION:-us-east-1} AWS_EC2_METADATA_DISABLED=true
  run_suite external
else
  for emu in ${EMULATORS:-local moto}; do
    t0=$SECONDS
    started+=("$emu")
    EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh start
    log "[$emu] emulators ready in $(elapsed "$t0")"
    (
      eval "$(EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh env)"
      run_suite "$emu"
    )
    EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh stop
  done
fi
log "all integration runs passed in $(elapsed "$t_all")"
