#!/usr/bin/env bash
# Deployment graph execution on the local server (part of make bench):
#  1. time from `graph execute` to `ready` for a 300-task graph whose tasks do
#     nothing (shell `true`), run by 3 real `tuningbox agent` processes, one per node;
#  2. what idle agents cost: IDLE_AGENTS (100) agents waiting for work for
#     IDLE_SECONDS (60), counted from the server's request log, with the
#     server's CPU time over the same window;
#  3. Fuel scale (.ci/fuelscale): fuel-library's default graph on each of
#     FUEL_NODES (1000 5000) nodes with real astute data, on a fresh server
#     each: data load, serialized_tasks (every page), deploy, the answer's
#     size, serve's CPU time and RssAnon, 20 agents claiming at full speed,
#     then 1,000 real agents long-polling a dry run.
# Everything runs on 127.0.0.1; every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
PORT=${BENCH_GRAPHS_PORT:-18091}
BASE="http://127.0.0.1:$PORT"
IDLE_AGENTS=${IDLE_AGENTS:-100}
IDLE_SECONDS=${IDLE_SECONDS:-60}
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/tuningbox" ./cmd/tuningbox
TB="$WORK/tuningbox"
export TUNINGBOX_URL=$BASE TUNINGBOX_USER=bench TUNINGBOX_PASSWORD=bench-graphs-secret
TUNINGBOX_ADMIN_USER=$TUNINGBOX_USER TUNINGBOX_ADMIN_PASSWORD=$TUNINGBOX_PASSWORD \
  "$TB" serve --listen "127.0.0.1:$PORT" --data "$WORK/data" 2>"$WORK/server.log" &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
for _ in $(seq 1 100); do curl -fs "$BASE/api/v1/config/" >/dev/null && break; sleep 0.1; done

"$TB" comp create --name bench --definition globals >/dev/null
"$TB" env create --id 1 --components bench --levels role,nodes >/dev/null
roles=(controller compute ceph-osd)
for i in 1 2 3; do
  "$TB" node create --id "$i" --fqdn "node-$i.bench.test" --env 1 --role "${roles[$((i - 1))]}" >/dev/null
done

# 300 tasks: a chain of 60 that every node runs, and 80 for each role, each
# requiring the one before it in its chain; every 20th compute task waits for
# the controller task of the same number (cross-depends).
python3 - "$WORK/graph.json" <<'EOF'
import json, sys
tasks = []
def add(tid, roles, requires, **extra):
    t = {"id": tid, "type": "shell", "roles": roles, "parameters": {"cmd": "true"}}
    if requires:
        t["requires"] = [requires]
    t.update(extra)
    tasks.append(t)
for i in range(60):
    add(f"common-{i:03}", ["*"], f"common-{i-1:03}" if i else None)
for role in ["controller", "compute", "ceph-osd"]:
    for i in range(80):
        extra = {}
        if role == "compute" and i % 20 == 19:
            extra["cross-depends"] = [{"name": f"controller-{i:03}", "role": "controller"}]
        add(f"{role}-{i:03}", [role], f"{role}-{i-1:03}" if i else "common-059", **extra)
assert len(tasks) == 300
json.dump(tasks, open(sys.argv[1], "w"))
EOF
"$TB" graph upload -e 1 -t default -f "$WORK/graph.json" --validate >/dev/null

for i in 1 2 3; do
  "$TB" agent --node "node-$i.bench.test" --workdir "$WORK/agent-$i" 2>"$WORK/agent-$i.log" &
  PIDS+=("$!")
done
sleep 1

echo "== 300-task graph (shell true), 3 agents: execute to ready"
start=$(date +%s%N)
tx=$("$TB" graph execute -e 1 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
while :; do
  status=$(curl -fs -u "$TUNINGBOX_USER:$TUNINGBOX_PASSWORD" "$BASE/api/v1/transactions/$tx" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
  [ "$status" != running ] && break
  sleep 0.05
done
end=$(date +%s%N)
runs=$(grep -h '"msg":"task finished"' "$WORK"/agent-*.log | grep -c "$tx" || true)
ms=$(( (end - start) / 1000000 ))
echo "transaction $status after ${ms} ms: $runs task runs on 3 nodes ($(( runs * 1000 / (ms > 0 ? ms : 1) )) tasks/s)"
[ "$status" = ready ] || { echo "the bench transaction did not end ready"; exit 1; }

echo "== $IDLE_AGENTS idle agents for ${IDLE_SECONDS}s (long poll, default --wait)"
"$TB" env create --id 2 --components bench --levels nodes >/dev/null
for i in $(seq 1 "$IDLE_AGENTS"); do
  "$TB" node create --id $((100 + i)) --fqdn "idle-$i.bench.test" --env 2 --role compute >/dev/null
done
for i in $(seq 1 "$IDLE_AGENTS"); do
  "$TB" agent --node $((100 + i)) --workdir "$WORK/idle-$i" 2>/dev/null &
  PIDS+=("$!")
done
sleep 5 # every agent has started and is waiting
cpu() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
claims() { grep -c '/api/v1/clusters/2/nodes/[0-9]*/claim' "$WORK/server.log" || true; }
c0=$(claims); t0=$(cpu)
sleep "$IDLE_SECONDS"
c1=$(claims); t1=$(cpu)
ticks=$(getconf CLK_TCK)
python3 - "$c0" "$c1" "$t0" "$t1" "$ticks" "$IDLE_AGENTS" "$IDLE_SECONDS" <<'EOF'
import sys
c0, c1, t0, t1, tck, agents, secs = map(float, sys.argv[1:])
per_min = (c1 - c0) / agents / (secs / 60)
cpu = (t1 - t0) / tck
print(f"{int(c1 - c0)} requests from {int(agents)} idle agents in {int(secs)} s: "
      f"{per_min:.2f} requests per idle agent per minute; server CPU {cpu:.2f} s ({100 * cpu / secs:.1f}% of one core)")
EOF
grep -E 'VmRSS' "/proc/$SERVER_PID/status"

echo "== Fuel scale: fuel-library's default graph, real astute data per node, through the API"
FUEL=testdata/fuel   # the repository's copy of Fuel's data
go build -o "$WORK/fuelscale" ./.ci/fuelscale
for n in ${FUEL_NODES:-1000 5000}; do
  TUNINGBOX_ADMIN_USER=$TUNINGBOX_USER TUNINGBOX_ADMIN_PASSWORD=$TUNINGBOX_PASSWORD \
    "$TB" serve --listen "127.0.0.1:$((PORT + 1))" --data "$WORK/fuel-$n" 2>/dev/null &
  FUEL_PID=$!
  PIDS+=("$FUEL_PID")
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$((PORT + 1))/api/v1/config/" >/dev/null && break; sleep 0.1; done
  # Bounded, so that make bench ends whatever a change does to the planner
  # (5,000 nodes take about 6 minutes in all, the explained listing 1.5 of them).
  timeout "${FUEL_TIMEOUT:-900}" "$WORK/fuelscale" -nodes "$n" -fuel "$FUEL" -url "http://127.0.0.1:$((PORT + 1))" -pid "$FUEL_PID" \
    -user "$TUNINGBOX_USER" -password "$TUNINGBOX_PASSWORD" -pollers 1000 -agent-time 30s ||
    echo "fuelscale $n nodes: did not finish within ${FUEL_TIMEOUT:-900} s (serve RssAnon $(awk '/RssAnon/ {print int($2 / 1024)}' "/proc/$FUEL_PID/status") MiB)"
  kill "$FUEL_PID" && wait "$FUEL_PID" 2>/dev/null || true
  rm -rf "$WORK/fuel-$n"
done
