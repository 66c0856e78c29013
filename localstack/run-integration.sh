#!/usr/bin/env bash
# The integration run (`make integration`): for each emulator set, start it, start
# `tuningbox serve --backend aws` against it, run the integration tests of localstack/
# (store contract suite, fault injection, call counts, HTTP black-box suite); then
# start the local API Gateway (localstack/gateway) from the synthesized template
# (HTTP API on DynamoDB Local + versitygw, REST API on moto) in front of the real
# Lambda bootstraps and run the HTTP black-box suite, the gateway's auth and
# route-walk tests, the CLI tests and (first set) the Hiera test through it; every
# operation of the OpenAPI document must answer one of its declared statuses
# through the gateway ("gateway: N of M operations"). Everything
# listens on and talks to 127.0.0.1 only; every process is stopped by PID.
#
#   EMULATORS="local moto" (default) - DynamoDB Local + versitygw, then moto
#   AWS_ENDPOINT_URL=http://127.0.0.1:4566 - run once against emulators already
#                                           running there (LocalStack, see README.md)
#   INTEGRATION_LOGS=DIR - keep the run's logs (tests, servers, gateways with
#                          the functions' lines, answers, OpenAPI documents) there
#   INTEGRATION_TESTS=REGEX - run only these tests of localstack/ (go test -run),
#                             behind serve and the gateway, and not the CLI and
#                             Hiera suites nor the operation coverage
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
  if [ -n "${INTEGRATION_LOGS:-}" ]; then
    mkdir -p "$INTEGRATION_LOGS" && cp "$RUN"/*.log "$RUN"/routes-* "$RUN"/openapi-* "$INTEGRATION_LOGS"/ 2>/dev/null || true
  fi
  rm -rf "$RUN"
  exit $status
}
trap cleanup EXIT

stop_serve() {
  local f pid
  for f in "$RUN/serve.pid" "$RUN/gateway.pid"; do
    if [ -f "$f" ]; then
      pid=$(<"$f")
      kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
      rm -f "$f"
    fi
  done
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
    go test -count=1 -v -run "${INTEGRATION_TESTS:-.}" ./localstack/ >"$RUN/test-$name.log" 2>&1 || status=$?
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

# run_gateway NAME TEMPLATE: the local API Gateway over a fresh table and bucket,
# and the suites through it; the exercised routes go to $RUN/routes-NAME.
# LONG_POLL_POOL=N deploys with LongPollReservedConcurrency=N and WATCH_POOL=N
# with WatchReservedConcurrency=N, which the gateway enforces
# (TestGatewayLongPollsHaveTheirOwnPool, TestGatewayWatchesHaveTheirOwnPool).
run_gateway() {
  local name=$1 template=$2 t0=$SECONDS password status=0 parameters=()
  password=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
  export TUNINGBOX_GATEWAY_TEMPLATE=$template TUNINGBOX_GATEWAY_BIN=$RUN/host TUNINGBOX_GATEWAY_ROUTES_LOG=$RUN/routes-$name
  if [ -n "${LONG_POLL_POOL:-}" ]; then
    parameters+=(-parameter "LongPollReservedConcurrency=$LONG_POLL_POOL")
  fi
  if [ -n "${WATCH_POOL:-}" ]; then
    parameters+=(-parameter "WatchReservedConcurrency=$WATCH_POOL")
  fi
  "$RUN/gateway" "${parameters[@]}" -table "tuningbox-gw-$name" -bucket "tuningbox-gw-$name" >"$RUN/gateway-$name.url" 2>"$RUN/gateway-$name.log" &
  echo $! >"$RUN/gateway.pid"
  local pid=$! url=
  for _ in $(seq 1 300); do
    url=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["url"])' "$RUN/gateway-$name.url" 2>/dev/null) && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    log "[$name] the gateway did not start; its log:"
    tail -n 30 "$RUN/gateway-$name.log" >&2
    return 1
  fi
  curl -sf -o "$RUN/openapi-$name.json" "$url/api/v1/openapi.json" || { log "[$name] GET /api/v1/openapi.json failed"; return 1; }
  log "[$name] local API Gateway ($(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["api"])' "$RUN/gateway-$name.url") API) on $url (pid $pid)"
  # As after `make deploy`: read the first administrator from the stack's secret
  # (output AdminSecretArn, in the emulated Secrets Manager), log in as it and
  # create the administrator the suites use.
  local first
  first=$(python3 - "$RUN/gateway-$name.url" <<'PY'
import json, os, sys
import boto3
arn = json.load(open(sys.argv[1]))["outputs"]["AdminSecretArn"]
client = boto3.client("secretsmanager", region_name=os.environ.get("AWS_REGION", "us-east-1"))
secret = json.loads(client.get_secret_value(SecretId=arn)["SecretString"])
print(secret["username"], secret["password"])
PY
  ) || { log "[$name] cannot read the admin secret"; tail -n 30 "$RUN/gateway-$name.log" >&2; return 1; }
  TUNINGBOX_URL=$url TUNINGBOX_USER=${first% *} TUNINGBOX_PASSWORD=${first#* } TUNINGBOX_NEW_PASSWORD=$password \
    "$RUN/tuningbox" user create integration --role admin >&2 ||
    { log "[$name] the first administrator ${first% *} could not create a user"; tail -n 30 "$RUN/gateway-$name.log" >&2; return 1; }
  log "[$name] logged in as the first administrator ${first% *} (generated in the stack's secret) and created the administrator integration"
  TUNINGBOX_URL=$url TUNINGBOX_USER=integration TUNINGBOX_PASSWORD=$password \
    TUNINGBOX_GATEWAY=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["api"])' "$RUN/gateway-$name.url") \
    TUNINGBOX_GATEWAY_LONG_POLL_POOL=${LONG_POLL_POOL:-} TUNINGBOX_GATEWAY_WATCH_POOL=${WATCH_POOL:-} \
    go test -count=1 -v -run "${INTEGRATION_TESTS:-^(TestHTTP|TestGateway)}" ./localstack/ >"$RUN/test-gateway-$name.log" 2>&1 || status=$?
  # Suites that start their own server get a fresh gateway per server instead.
  if [ "$status" -eq 0 ] && [ -z "${INTEGRATION_TESTS:-}" ]; then
    TUNINGBOX_TEST_GATEWAY=$RUN/gateway go test -count=1 -v ./cmd/tuningbox/ >>"$RUN/test-gateway-$name.log" 2>&1 || status=$?
  fi
  if [ "$status" -eq 0 ] && [ "${GATEWAY_HIERA:-}" = "$name" ] && [ -z "${INTEGRATION_TESTS:-}" ]; then
    HIERA_TRANSPORT_ONLY=1 TUNINGBOX_TEST_GATEWAY=$RUN/gateway puppet/test/run.sh >>"$RUN/test-gateway-$name.log" 2>&1 || status=$?
  fi
  stop_serve
  grep -E '^(--- |ok|FAIL|panic)' "$RUN/test-gateway-$name.log" | grep -v -- '--- SKIP' >&2 || true
  sed -n '/^gateway report/,$p' "$RUN/gateway-$name.log" | grep -v '^\[' >&2 || true
  if [ "$status" -ne 0 ]; then
    log "[$name] gateway suites FAILED after $(elapsed "$t0"); test output and gateway log:"
    tail -n 80 "$RUN/test-gateway-$name.log" >&2
    grep -v 'WARN failed to close HTTP response body' "$RUN/gateway-$name.log" | tail -n 30 >&2
    return 1
  fi
  if [ -z "${INTEGRATION_TESTS:-}" ]; then
    "$RUN/gateway" -template "$template" -openapi "$RUN/openapi-$name.json" -coverage "$RUN/routes-$name" >&2
  fi
  log "[$name] gateway suites passed: $(grep -c -- '--- PASS' "$RUN/test-gateway-$name.log") tests and subtests in $(elapsed "$t0")"
}

t_all=$SECONDS
go build -o "$RUN/tuningbox" ./cmd/tuningbox
go build -o "$RUN/gateway" ./localstack/gateway
for fn in functions/*/; do
  fn=$(basename "$fn")
  CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags="-s -w" -o "$RUN/host/$fn/bootstrap" "./functions/$fn"
done
log "built tuningbox, the gateway and the host bootstraps in $(elapsed "$t_all")"
t0=$SECONDS
make -s synth >"$RUN/synth.log" 2>&1 && make -s synth API_TYPE=rest CDK_OUT=cdk.out-rest >>"$RUN/synth.log" 2>&1 ||
  { log "make synth failed:"; tail -n 30 "$RUN/synth.log" >&2; exit 1; }
log "synthesized the HTTP API (cdk.out) and REST API (cdk.out-rest) templates in $(elapsed "$t0")"

if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
  export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}
  export AWS_REGION=${AWS_REGION:-us-east-1} AWS_EC2_METADATA_DISABLED=true
  run_suite external
  LONG_POLL_POOL=2 WATCH_POOL=2 GATEWAY_HIERA=external run_gateway external "$ROOT/cdk.out/Tuningbox.template.json"
else
  for emu in ${EMULATORS:-local moto}; do
    t0=$SECONDS
    started+=("$emu")
    EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh start
    log "[$emu] emulators ready in $(elapsed "$t0")"
    (
      eval "$(EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh env)"
      run_suite "$emu"
      # The HTTP API (and Hiera) on DynamoDB Local + versitygw, the REST variant on moto.
      if [ "$emu" = local ]; then
        LONG_POLL_POOL=2 WATCH_POOL=2 GATEWAY_HIERA=$emu run_gateway "$emu" "$ROOT/cdk.out/Tuningbox.template.json"
      else
        run_gateway "$emu" "$ROOT/cdk.out-rest/Tuningbox.template.json"
      fi
    )
    EMULATOR=$emu EMULATOR_STATE=$RUN/$emu localstack/emulators.sh stop
  done
fi
log "all integration runs passed in $(elapsed "$t_all")"
