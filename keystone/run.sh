#!/usr/bin/env bash
# Keystone test: tuningbox validating X-Auth-Token against a real Keystone.
# Installs Debian's python3-keystone when missing (no services, no database
# server: everything runs by hand here), sets up a Keystone on SQLite in a
# temporary directory (db_sync, fernet_setup, bootstrap), serves its WSGI
# application on 127.0.0.1 and runs the Go test in keystone/, which creates
# projects, users and roles through Keystone's API and checks allow, deny,
# expiry and revocation through tuningbox.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
if ! [ -x /usr/bin/keystone-manage ]; then
  if ! apt-cache show python3-keystone >/dev/null 2>&1; then
    "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    -o DPkg::Lock::Timeout=600 python3-keystone
fi

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
admin_password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
mkdir -p "$work/fernet"
# Tokens live 15 s here, so that the test sees one expire; the cheapest bcrypt
# cost keeps password checks from dominating the test's time.
cat > "$work/keystone.conf" <<CONF
[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///$work/keystone.db
[token]
provider = fernet
expiration = 15
[identity]
password_hash_rounds = 4
[fernet_tokens]
key_repository = $work/fernet
[cache]
enabled = false
CONF
manage() { /usr/bin/keystone-manage --config-file "$work/keystone.conf" "$@" >>"$work/manage.log" 2>&1 || { cat "$work/manage.log"; exit 1; }; }
start=$SECONDS
manage db_sync
manage fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
manage bootstrap --bootstrap-password "$admin_password" --bootstrap-region-id RegionOne \
  --bootstrap-public-url "http://127.0.0.1:$port/v3"
# Write-ahead logging: a connection still reading no longer makes another's
# commit fail with "database is locked".
/usr/bin/python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode=WAL")' "$work/keystone.db"
echo "keystone set up in $((SECONDS - start)) s"

/usr/bin/python3 keystone/wsgi_server.py "$work/keystone.conf" "$port" >"$work/keystone.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  if curl -sf "http://127.0.0.1:$port/v3" >/dev/null; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then cat "$work/keystone.log"; exit 1; fi
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/v3" >/dev/null || { cat "$work/keystone.log"; exit 1; }
echo "keystone serving on 127.0.0.1:$port after $((SECONDS - start)) s"

TUNINGBOX_TEST_KEYSTONE_URL="http://127.0.0.1:$port/v3" TUNINGBOX_TEST_KEYSTONE_ADMIN_PASSWORD="$admin_password" \
  ${GO:-go} test -count=1 -v ./keystone/ || { tail -50 "$work/keystone.log"; exit 1; }
