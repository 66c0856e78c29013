#!/usr/bin/env bash
# The embedded store's restore drill (docs/operations.md), end to end, printed
# as a transcript: back up a serving store, write after the backup, stop the
# server, refuse a cut-short backup, restore the backup, start again and find
# what was backed up and nothing written after it.
# Everything runs on 127.0.0.1; every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
PORT=${DRILL_PORT:-18095}
SERVER_PID=""
stop_server() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/tuningbox" ./cmd/tuningbox
tb() { echo "\$ tuningbox $*" && "$WORK/tuningbox" "$@"; }
export TUNINGBOX_URL="http://127.0.0.1:$PORT" TUNINGBOX_USER=drill TUNINGBOX_PASSWORD=drill-secret
export TUNINGBOX_ADMIN_USER=$TUNINGBOX_USER TUNINGBOX_ADMIN_PASSWORD=$TUNINGBOX_PASSWORD
start_server() {
  "$WORK/tuningbox" serve --listen "127.0.0.1:$PORT" --data "$WORK/data" 2>>"$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 1 100); do curl -fs "$TUNINGBOX_URL/api/v1/config/" >/dev/null && break; sleep 0.1; done
}
doc=(--env 1 --resource astute)

start_server
tb comp create --name fuel --definition astute >/dev/null
tb env create --id 1 --components fuel --levels role >/dev/null
tb config set "${doc[@]}" --key region --value RegionOne
tb store backup --to "$WORK/tuningbox.backup"
tb config set "${doc[@]}" --key region --value written-after-the-backup
echo "# stop the server (pid $SERVER_PID)"
stop_server
head -c 20000 "$WORK/tuningbox.backup" >"$WORK/cut-short.backup"
tb store restore "$WORK/cut-short.backup" --data "$WORK/data" && exit 1 || echo "(exit status $?: refused, the store untouched)"
tb store restore "$WORK/tuningbox.backup" --data "$WORK/data"
tb store check --data "$WORK/data"
echo "# start the server again"
start_server
tb config get "${doc[@]}" --key region --format plain
test "$("$WORK/tuningbox" config get "${doc[@]}" --key region --format plain)" = RegionOne
tb config history "${doc[@]}"
echo "drill passed: the restored store holds what was backed up and nothing written after"
