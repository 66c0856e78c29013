#!/usr/bin/env bash
# make bench: Go benchmarks, then load on the local server's hot path (the
# effective read Hiera makes). Targets (see README): >= 1600 req/s for a ~520 KB
# effective document ([role, nodes] environment) under `wrk -t2 -c8`, and
# p99 < 10 ms at a constant 200 req/s for a ~50 KB document.
# Everything runs on 127.0.0.1 and every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d)
PORT=${BENCH_PORT:-18080}
BASE="http://127.0.0.1:$PORT"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk; then
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends wrk) >/dev/null
fi
VEGETA_VERSION=v12.13.0
GOBIN_DIR="$ROOT/.cache/bin"
if [ ! -x "$GOBIN_DIR/vegeta" ]; then
  GOBIN="$GOBIN_DIR" go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
fi

echo "== Go benchmarks"
go test -run '^$' -bench . -benchmem -benchtime "${BENCHTIME:-1s}" ./shared/... | grep -E '^(Benchmark|ok|PASS|FAIL|goos|cpu)' || true

echo "== Local server on the embedded store"
go build -o "$WORK/tuningbox" ./cmd/tuningbox
# A bench administrator; every request sends its Basic credentials, as Hiera does.
export TUNINGBOX_ADMIN_USER=bench TUNINGBOX_ADMIN_PASSWORD=bench-secret
AUTH="Authorization: Basic $(printf '%s:%s' "$TUNINGBOX_ADMIN_USER" "$TUNINGBOX_ADMIN_PASSWORD" | base64 -w0)"
"$WORK/tuningbox" serve --listen "127.0.0.1:$PORT" --data "$WORK/data" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -fs "$BASE/api/v1/config/" >/dev/null && break; sleep 0.1; done

python3 "$ROOT/.ci/bench_seed.py" "$BASE"

URL_520="$BASE/api/v1/config/environments/1/role/controller/nodes/node-1/resources/astute/values?effective"
URL_50="$BASE/api/v1/config/environments/1/role/controller/nodes/node-1/resources/globals/values?effective"
printf 'effective document sizes: 520KB case %s bytes, 50KB case %s bytes\n' \
  "$(curl -fs -H "$AUTH" "$URL_520" | wc -c)" "$(curl -fs -H "$AUTH" "$URL_50" | wc -c)"

echo "== wrk -t2 -c8 -d${WRK_SECONDS:-15}s, ~520 KB effective document (target >= 1600 req/s)"
wrk -t2 -c8 -d"${WRK_SECONDS:-15}s" --latency -H "$AUTH" "$URL_520" | tee "$WORK/wrk.txt"

echo "== constant 200 req/s for ${RATE_SECONDS:-20}s, ~50 KB effective document (target p99 < 10 ms)"
printf 'GET %s\n%s\n' "$URL_50" "$AUTH" | "$GOBIN_DIR/vegeta" attack -rate=200 -duration="${RATE_SECONDS:-20}s" -keepalive=true \
  | "$GOBIN_DIR/vegeta" report -type=text | tee "$WORK/vegeta.txt"

echo "== server memory after the load"
grep -E 'VmRSS|VmHWM' "/proc/$SERVER_PID/status"

echo "== a good user's cached reads alone, then during a 16-client wrong-password flood on the same user"
go run ./.ci/loginflood -url "$BASE" -user "$TUNINGBOX_ADMIN_USER" -password "$TUNINGBOX_ADMIN_PASSWORD" -duration "${FLOOD_SECONDS:-5}s"

echo "== kill -9 rounds: acknowledged writes vs versions vs audit records"
go run ./.ci/killrounds -bin "$WORK/tuningbox" -data "$WORK/killrounds" -rounds "${KILL_ROUNDS:-6}"

# ConfigDB 1.3: deep merge and explain on the ~520 KB document, and what 200 idle watchers cost.
bash .ci/bench_history.sh

# Deployment graphs: execute-to-ready with 3 agents, and what idle agents cost.
bash .ci/bench_graphs.sh

echo "== contention run (emulators and embedded store)"
.ci/contention.sh
