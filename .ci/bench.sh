#!/usr/bin/env bash
# make bench: Go benchmarks, then load on the local server's hot path (the
# effective read Hiera makes). Targets (see README): >= 1600 req/s for a ~520 KB
# effective document ([role, nodes] environment) under `wrk -t2 -c8`, and
# p99 < 10 ms at a constant 200 req/s for a ~50 KB document; beside nginx
# (Debian nginx-light, auth_basic, sendfile) serving the same bytes as a static
# file in the same run: >= 0.8 of it for plain answers, >= 1.0 of its
# gzip_static for gzip clients (median of NGINX_ROUNDS rounds, with the range);
# >= 0.9 of a trivial handler on a plain net/http server sending the same bytes
# (.ci/httpceiling -headers: tuningbox's body and answer headers, the same
# Basic check), plain and gzip, shown beside the same handler sending the body
# alone.
# Everything runs on 127.0.0.1 and every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d)
PORT=${BENCH_PORT:-18080}
BASE="http://127.0.0.1:$PORT"
SERVER_PID=""
NGINX_PID=""
CEILING_PID=""
HEADERS_CEILING_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null || true
  [ -n "$CEILING_PID" ] && kill "$CEILING_PID" 2>/dev/null && wait "$CEILING_PID" 2>/dev/null || true
  [ -n "$HEADERS_CEILING_PID" ] && kill "$HEADERS_CEILING_PID" 2>/dev/null && wait "$HEADERS_CEILING_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  ("${sudo[@]}" apt-get update -qq -o DPkg::Lock::Timeout=600 &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "$@") >/dev/null
}
if ! need wrk; then apt_install wrk; fi
# nginx-light has auth_basic and gzip_static; the bench runs its own instance on
# 127.0.0.1 with its own configuration (the package's service is not used).
if [ ! -x /usr/sbin/nginx ]; then apt_install nginx-light; fi
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
if grep -q 'Non-2xx' "$WORK/wrk.txt"; then echo "the run got error answers" >&2; exit 1; fi

echo "== constant 200 req/s for ${RATE_SECONDS:-20}s, ~50 KB effective document (target p99 < 10 ms)"
printf 'GET %s\n%s\n' "$URL_50" "$AUTH" | "$GOBIN_DIR/vegeta" attack -rate=200 -duration="${RATE_SECONDS:-20}s" -keepalive=true \
  | "$GOBIN_DIR/vegeta" report -type=text | tee "$WORK/vegeta.txt"

echo "== server memory after the load"
grep -E 'VmRSS|VmHWM' "/proc/$SERVER_PID/status"

echo "== a good user's cached reads alone, then during a 16-client wrong-password flood on the same user"
go run ./.ci/loginflood -url "$BASE" -user "$TUNINGBOX_ADMIN_USER" -password "$TUNINGBOX_ADMIN_PASSWORD" -duration "${FLOOD_SECONDS:-5}s"

echo "== beside nginx: the same document bytes as a static file (auth_basic, sendfile) and gzip_static"
# The document exactly as tuningbox answers it, plain and gzip-encoded.
mkdir -p "$WORK/nginx/www" "$WORK/nginx/tmp"
chmod 711 "$WORK" # nginx's workers run as an unprivileged user when started by root
curl -fs -H "$AUTH" "$URL_520" -o "$WORK/nginx/www/doc.json"
curl -fs -H "$AUTH" -H 'Accept-Encoding: gzip' "$URL_520" -o "$WORK/nginx/www/doc.json.gz"
touch -r "$WORK/nginx/www/doc.json" "$WORK/nginx/www/doc.json.gz"
printf 'compression of the ~520 KB document: %s -> %s bytes\n' \
  "$(stat -c %s "$WORK/nginx/www/doc.json")" "$(stat -c %s "$WORK/nginx/www/doc.json.gz")"
# The same credentials; a salted SHA-1, checked on every request (nginx caches nothing).
python3 - "$TUNINGBOX_ADMIN_USER" "$TUNINGBOX_ADMIN_PASSWORD" >"$WORK/nginx/htpasswd" <<'PY'
import base64, hashlib, os, sys
user, password = sys.argv[1:]
salt = os.urandom(8)
print(f"{user}:{{SSHA}}" + base64.b64encode(hashlib.sha1(password.encode() + salt).digest() + salt).decode())
PY
NGINX_PORT=$((PORT + 1))
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 256; }
http {
  access_log $WORK/nginx/access.log;
  client_body_temp_path $WORK/nginx/tmp; proxy_temp_path $WORK/nginx/tmp; fastcgi_temp_path $WORK/nginx/tmp;
  uwsgi_temp_path $WORK/nginx/tmp; scgi_temp_path $WORK/nginx/tmp;
  sendfile on; tcp_nopush on; keepalive_requests 1000000;
  default_type application/json;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $WORK/nginx/www;
    auth_basic "bench"; auth_basic_user_file $WORK/nginx/htpasswd;
    gzip_static on;
  }
}
CONF
/usr/sbin/nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>>"$WORK/nginx/error.log" &
NGINX_PID=$!
NGINX_URL="http://127.0.0.1:$NGINX_PORT/doc.json"
for _ in $(seq 1 50); do curl -fs -o /dev/null -H "$AUTH" "$NGINX_URL" && break; sleep 0.1; done
cmp <(curl -fs -H "$AUTH" "$NGINX_URL") "$WORK/nginx/www/doc.json"
cmp <(curl -fs -H "$AUTH" -H 'Accept-Encoding: gzip' "$NGINX_URL") "$WORK/nginx/www/doc.json.gz"

# What net/http itself costs here: a trivial Go handler with the same Basic
# check and the same bytes on a plain http.Server (see .ci/httpceiling).
CEILING_PORT=$((PORT + 2))
go build -o "$WORK/httpceiling" ./.ci/httpceiling
"$WORK/httpceiling" -listen "127.0.0.1:$CEILING_PORT" -file "$WORK/nginx/www/doc.json" \
  -user "$TUNINGBOX_ADMIN_USER" -password "$TUNINGBOX_ADMIN_PASSWORD" &
CEILING_PID=$!
CEILING_URL="http://127.0.0.1:$CEILING_PORT/doc.json"
for _ in $(seq 1 50); do curl -fs -o /dev/null -H "$AUTH" "$CEILING_URL" && break; sleep 0.1; done
cmp <(curl -fs -H "$AUTH" -H 'Accept-Encoding: gzip' "$CEILING_URL") "$WORK/nginx/www/doc.json.gz"
# The same handler sending tuningbox's answer headers too (its gzip answer's,
# as curl dumps them; its plain answer's differ only by the content headers,
# which the handler sets itself): the same bytes on the wire, headers
# included. This is the ceiling the targets are taken against.
curl -fs -o /dev/null -D "$WORK/tuningbox-headers.txt" -H "$AUTH" -H 'Accept-Encoding: gzip' "$URL_520"
"$WORK/httpceiling" -listen "127.0.0.1:$((CEILING_PORT + 1))" -file "$WORK/nginx/www/doc.json" \
  -user "$TUNINGBOX_ADMIN_USER" -password "$TUNINGBOX_ADMIN_PASSWORD" -headers "$WORK/tuningbox-headers.txt" &
HEADERS_CEILING_PID=$!
HEADERS_CEILING_URL="http://127.0.0.1:$((CEILING_PORT + 1))/doc.json"
for _ in $(seq 1 50); do curl -fs -o /dev/null -H "$AUTH" "$HEADERS_CEILING_URL" && break; sleep 0.1; done
cmp <(curl -fs -H "$AUTH" -H 'Accept-Encoding: gzip' "$HEADERS_CEILING_URL") "$WORK/nginx/www/doc.json.gz"

# cpu_ticks PID...: the CPU time (user and system, in clock ticks) the processes used so far.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo "$total"
}
TICK_US=$((1000000 / $(getconf CLK_TCK)))
# rate NAME URL "PID..." [HEADER]: requests per second under wrk -t2 -c8; the
# server's CPU time per request (the PIDs') goes to cpu.txt.
rate() {
  local name=$1 url=$2 pids=$3
  local out="$WORK/wrk-${name//[^a-z]/-}.txt"
  shift 3
  local args=(-H "$AUTH")
  if [ $# -gt 0 ]; then args+=(-H "$1"); fi
  local before
  before=$(cpu_ticks $pids) # unquoted: a list of PIDs
  wrk -t2 -c8 -d"${NGINX_SECONDS:-10}s" "${args[@]}" "$url" >"$out"
  local used=$(($(cpu_ticks $pids) - before))
  # A rate of error answers is no rate: say so, and let the ratios refuse it.
  if grep -q 'Non-2xx' "$out"; then
    echo "$name: $(grep 'Non-2xx' "$out" | xargs) from $url" >&2
    echo NaN
    return
  fi
  awk -v name="$name" -v us=$((used * TICK_US)) '/ requests in / {printf "%s %.1f\n", name, us / $1}' "$out" >>"$WORK/cpu.txt"
  awk '/^Requests\/sec:/ {print $2}' "$out"
}
NGINX_WORKERS=$(pgrep -P "$NGINX_PID" | xargs)
# Other work on the machine moves every rate: the servers take turns within a
# round, the ratios are taken within a round, and the rounds are repeated.
ROUNDS=${NGINX_ROUNDS:-3}
printf 'load average before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %10s %10s %10s %10s %10s %10s %10s %10s\n' round nginx tuningbox net/http '+headers' 'nginx gz' 'tb gz' 'net/http gz' '+headers gz'
: >"$WORK/rounds.txt"
: >"$WORK/cpu.txt"
for round in $(seq 1 "$ROUNDS"); do
  row=("$(rate nginx "$NGINX_URL" "$NGINX_WORKERS")" "$(rate tuningbox "$URL_520" "$SERVER_PID")" "$(rate net/http "$CEILING_URL" "$CEILING_PID")")
  row+=("$(rate 'net/http with the headers' "$HEADERS_CEILING_URL" "$HEADERS_CEILING_PID")")
  row+=("$(rate 'nginx gzip' "$NGINX_URL" "$NGINX_WORKERS" 'Accept-Encoding: gzip')")
  row+=("$(rate 'tuningbox gzip' "$URL_520" "$SERVER_PID" 'Accept-Encoding: gzip')")
  row+=("$(rate 'net/http gzip' "$CEILING_URL" "$CEILING_PID" 'Accept-Encoding: gzip')")
  row+=("$(rate 'net/http with the headers gzip' "$HEADERS_CEILING_URL" "$HEADERS_CEILING_PID" 'Accept-Encoding: gzip')")
  printf '%-6s %10s %10s %10s %10s %10s %10s %10s %10s\n' "$round" "${row[@]}"
  echo "${row[*]}" >>"$WORK/rounds.txt"
done
printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
# What each server spends on a request (user and system time of its processes;
# wrk's own share of the two cores is not in it): the ratios follow from it.
python3 - "$WORK/cpu.txt" <<'PY'
import statistics, sys
by_name = {}
for line in open(sys.argv[1]):
    name, us = line.rsplit(" ", 1)
    by_name.setdefault(name, []).append(float(us))
print("server CPU per request (median of the rounds): " + ", ".join(f"{n} {statistics.median(v):.1f} us" for n, v in by_name.items()))
PY
kill "$CEILING_PID" "$HEADERS_CEILING_PID" && wait "$CEILING_PID" "$HEADERS_CEILING_PID" 2>/dev/null || true
CEILING_PID="" HEADERS_CEILING_PID=""
python3 - "$WORK/rounds.txt" <<'PY'
import statistics, sys
rounds = [list(map(float, line.split())) for line in open(sys.argv[1])]
if any(v != v for r in rounds for v in r):
    sys.exit("a run got error answers (NaN above): no ratios")
def ratio(name, num, den, target=None):
    rs = [r[num] / r[den] for r in rounds]
    verdict = "" if target is None else f" (target >= {target}){'' if statistics.median(rs) >= target else '  BELOW TARGET'}"
    print(f"{name}: median {statistics.median(rs):.2f}, range {min(rs):.2f}-{max(rs):.2f}{verdict}")
ratio("tuningbox / nginx, plain", 1, 0, 0.8)
ratio("tuningbox / nginx, gzip", 5, 4, 1.0)
ratio("net/http (body alone) / nginx, plain", 2, 0)
ratio("net/http (body alone) / nginx, gzip", 6, 4)
# The ceiling: net/http sending the same bytes (body and tuningbox's answer
# headers); beside it, what the same handler does sending the body alone.
ratio("tuningbox / net/http, the same bytes, plain", 1, 3, 0.9)
ratio("tuningbox / net/http, the same bytes, gzip", 5, 7, 0.9)
ratio("tuningbox / net/http sending the body alone, plain", 1, 2)
ratio("tuningbox / net/http sending the body alone, gzip", 5, 6)
ratio("net/http, the same bytes / the body alone, gzip", 7, 6)
PY

echo "== kill -9 rounds: acknowledged writes vs versions vs audit records"
go run ./.ci/killrounds -bin "$WORK/tuningbox" -data "$WORK/killrounds" -rounds "${KILL_ROUNDS:-6}"

# ConfigDB 1.3: deep merge and explain on the ~520 KB document, and what 200 idle watchers cost.
bash .ci/bench_history.sh

# Deployment graphs: execute-to-ready with 3 agents, and what idle agents cost.
bash .ci/bench_graphs.sh

echo "== Lambda bootstraps: sizes and start-up on the local Runtime API"
.ci/bench_bootstraps.sh

echo "== contention run (emulators and embedded store)"
.ci/contention.sh
