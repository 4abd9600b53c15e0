#!/bin/sh
# The demo behind `make demo`: the official TypeScript SDK client drives
# @modelcontextprotocol/server-everything over stdio through `mcpreel
# record`, then the recording is listed, shown, and replayed against the
# same server (which must answer the same), and served by mcpreel mock to
# the same client with no server running.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "${1:-build/mcpreel}")" && pwd)/$(basename "${1:-build/mcpreel}")
# Where the recording and reports go (the test of make demo puts them
# elsewhere).
dir=${MCPREEL_DEMO_DIR:-$top/demo}
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
echo "== mcpreel stats demo"
"$bin" stats --db "$db" demo
echo
echo "== mcpreel report demo -o $dir/report.html"
"$bin" report --db "$db" demo -o "$dir/report.html"
echo "(one self-contained page: open it in a browser)"
echo
echo "== mcpreel replay demo -- the same server (rules: examples/everything-rules.json)"
# server-everything's dynamic resources carry the time of day: the rules
# file says so, and everything else must come back the same.
status=0
"$bin" replay --db "$db" demo --rules "$top/examples/everything-rules.json" \
    --report junit -o "$dir/replay.xml" -- node "$server" stdio || status=$?
echo "(exit status $status; JUnit report in $dir/replay.xml)"
echo
echo "== the same client against mcpreel mock demo -- no server at all"
node "$top/tests/e2e/demo-client.mjs" --quiet --out "$dir/mock-results.json" -- \
    "$bin" mock --db "$db" demo
if cmp -s "$dir/client-results.json" "$dir/mock-results.json"; then
	echo "the client got the same results from the mock as from the real server"
else
	echo "the results differ: compare $dir/client-results.json and $dir/mock-results.json"
fi
echo
echo "The recording is in $db (mode 0600).  Replays are recorded too: see 'mcpreel sessions'."
echo "Try next:"
echo "  $bin show --db $db demo | less -S"
echo "  $bin show --db $db --json demo | head -3"
echo "  sqlite3 $db 'SELECT method, count(*), avg(latency_ns)/1e6 AS avg_ms FROM exchanges GROUP BY method'"
echo "  sqlite3 $db \"SELECT CAST(text AS TEXT) FROM events WHERE kind = 'stderr'\""
echo "  $bin replay --db $db demo --report json -- node $server stdio"
echo "  $bin mock --db $db demo --listen 127.0.0.1:8808    # the recorded server over HTTP"
echo
echo "mcpreel itself is $bin.  To put it on PATH, with its man page"
echo "(man mcpreel) and bash and zsh completions:"
echo "  sudo make install                   # in /usr/local"
echo "  make install PREFIX=\$HOME/.local    # or just for you"
