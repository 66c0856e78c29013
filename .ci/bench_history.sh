#!/usr/bin/env bash
# ConfigDB 1.3 reads on the local server (part of make bench), on the ~520 KB
# effective document .ci/bench_seed.py seeds: wrk -t2 -c8 on the plain cached
# effective read (the hot path, for comparison in the same run), the deep merge
# (cached like the plain one), explain (computed on every request) and explain
# of the deep merge; then .ci/watchbench: 200 clients waiting on a document
# (store reads per waiting client per minute, RSS).
# Everything runs on 127.0.0.1; every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
PORT=${BENCH_HISTORY_PORT:-18092}
BASE="http://127.0.0.1:$PORT"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
command -v wrk >/dev/null 2>&1 || (apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends wrk) >/dev/null

go build -o "$WORK/tuningbox" ./cmd/tuningbox
export TUNINGBOX_ADMIN_USER=bench TUNINGBOX_ADMIN_PASSWORD=bench-history-secret
AUTH="Authorization: Basic $(printf '%s:%s' "$TUNINGBOX_ADMIN_USER" "$TUNINGBOX_ADMIN_PASSWORD" | base64 -w0)"
"$WORK/tuningbox" serve --listen "127.0.0.1:$PORT" --data "$WORK/data" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -fs "$BASE/api/v1/config/" >/dev/null && break; sleep 0.1; done
python3 .ci/bench_seed.py "$BASE"

# From 1.2 on paths name the environment by UUID.
ENV=$(curl -fs -H "$AUTH" "$BASE/api/v1/config/environments/1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["uuid"])')
DOC="$BASE/api/v1/config/environments/$ENV/role/controller/nodes/node-1/resources/astute/values?effective"
V13="OpenStack-API-Version: config 1.3"
# The first request of each form computes it (cold: the merge, or explain with
# its audit look-ups); the next ones come from the response cache.
for q in "" "&merge=deep" "&explain" "&merge=deep&explain"; do
  curl -fs -H "$AUTH" -H "$V13" -o "$WORK/answer" -w "?effective$q: first request %{time_total} s, " "$DOC$q"
  printf '%s bytes\n' "$(wc -c <"$WORK/answer")"
done
for q in "" "&merge=deep" "&explain" "&merge=deep&explain"; do
  echo "== wrk -t2 -c8 -d${WRK_SECONDS:-10}s ?effective$q (~520 KB document)"
  wrk -t2 -c8 -d"${WRK_SECONDS:-10}s" --latency -H "$AUTH" -H "$V13" "$DOC$q" | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx'
done
grep -E 'VmRSS|VmHWM' "/proc/$SERVER_PID/status"

echo "== watch: ${WATCH_CLIENTS:-200} clients waiting for ${WATCH_SECONDS:-60}s"
go run ./.ci/watchbench -clients "${WATCH_CLIENTS:-200}" -duration "${WATCH_SECONDS:-60}s"
