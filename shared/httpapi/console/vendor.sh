#!/usr/bin/env bash
# Fetches the console's libraries from the npm registry, pinned by version and
# integrity, into web/vendor/ with their licenses: the output is committed
# (`make console-vendor` runs this; run it after changing a pin).
#   htm's preact/standalone.module.js: Preact, its hooks and htm in one ES module;
#   @hpcc-js/wasm-graphviz's dist/index.js: Graphviz compiled to WebAssembly
#   (inlined), loaded only when a plan's graph is drawn.
set -euo pipefail
cd "$(dirname "$0")"
out=web/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch PACKAGE@VERSION INTEGRITY: unpacks the package's tarball into $work/PACKAGE.
fetch() {
  local spec=$1 integrity=$2 name=${1%@*} got file
  read -r got file < <(cd "$work" && npm pack --silent --json "$spec" |
    python3 -c 'import json,sys; p=json.load(sys.stdin)[0]; print(p["integrity"], p["filename"])')
  if [[ $got != "$integrity" ]]; then
    echo "vendor.sh: $spec has integrity $got, pinned $integrity" >&2
    exit 1
  fi
  mkdir -p "$work/$name"
  tar -xzf "$work/$file" -C "$work/$name" --strip-components=1
}

fetch htm@3.1.1 sha512-983Vyg8NwUE7JkZ6NmOqpCZ+sh1bKv2iYTlUkzlWmA5JD2acKoxd4KVxbMmxX/85mtfdnDmTFoNKcg5DGAvxNQ==
fetch preact@10.29.8 sha512-ej2aVZ+vZ8WO7tvlQWRM9N63A0KzF9q4mWJfDUHgYaIofWY9hu74QdnQrjoPMmZi2/nZ5gN0bJCQF49xQqx09Q==
fetch @hpcc-js/wasm-graphviz@1.29.2 sha512-AkArBAZERT5OxH52/+kvCHB07cZ6ZNd9GnOvjw+S880bR88D6i27XfK6xj4dBhUDxNA2QPPMdgEcky3x4TJ3KA==

mkdir -p "$out"
cp "$work/htm/preact/standalone.module.js" "$out/htm-preact.js"
cp "$work/htm/LICENSE" "$out/htm.LICENSE.txt"
# htm's standalone module bundles Preact 10: its license (MIT) goes with it.
cp "$work/preact/LICENSE" "$out/preact.LICENSE.txt"
# The source map comment names a file not vendored: the browser would ask for it.
sed '/^\/\/# sourceMappingURL=/d' "$work/@hpcc-js/wasm-graphviz/dist/index.js" > "$out/graphviz.js"
cp "$work/@hpcc-js/wasm-graphviz/LICENSE" "$out/graphviz.LICENSE.txt"
