#!/bin/sh
# The demo behind `make demo`: the official TypeScript SDK client drives
# @modelcontextprotocol/server-everything over stdio through `mcpreel
# record`, then the recording is listed and shown.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "${1:-build/mcpreel}")" && pwd)/$(basename "${1:-build/mcpreel}")
dir=$top/demo
db=$dir/demo.db
server="$top/tests/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

mkdir -p "$dir"
rm -f "$db" "$db-wal" "$db-shm"

echo "== recording: SDK client -> mcpreel record -> server-everything (stdio)"
node "$top/tests/e2e/demo-client.mjs" --out "$dir/client-results.json" -- \
    "$bin" record --db "$db" --name demo -- node "$server" stdio
echo
echo "== mcpreel sessions"
"$bin" sessions --db "$db"
echo
echo "== mcpreel show demo (first 45 lines)"
"$bin" show --db "$db" demo | head -n 45
echo "   ..."
echo
echo "The recording is in $db (mode 0600)."
echo "Try next:"
echo "  $bin show --db $db demo | less -S"
echo "  $bin show --db $db --json demo | head -3"
echo "  sqlite3 $db 'SELECT method, count(*), avg(latency_ns)/1e6 AS avg_ms FROM exchanges GROUP BY method'"
echo "  sqlite3 $db \"SELECT CAST(text AS TEXT) FROM events WHERE kind = 'stderr'\""
