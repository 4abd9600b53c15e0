# The commands that read a recording, on a big session and on one a tenth
# its size: wall seconds and peak RSS of each, and whether the RSS stays
# flat (within 2x) from the small session to the big one.  Sourced by
# bench/run.sh (its helpers, $tmp, $mcpreel, $load, $echo_server, fail);
# can also run alone: bench/scen_big.sh [BUILD_DIR].
#
# Leaves BIG_DB (the database), BIG_SESSION and BIG_SMALL_SESSION (the
# session names) exported for a later scenario to reuse.

if [ -z "${BASH_SOURCE[1]:-}" ]; then
	# Run alone: the little of run.sh this needs.
	set -u
	build=${1:-build-bench}
	mcpreel=$build/mcpreel
	load=$build/bench/load
	echo_server=$build/bench/echo_server
	http_echo=$build/bench/http_echo
	http_load=$build/bench/http_load
	ready_timeout=${BENCH_READY_TIMEOUT:-15}
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpreel-bench.XXXXXX") || exit 1
	broken=0
	fail() { broken=1; echo "FAIL: $*"; }
	calc() { awk "BEGIN { printf \"$1\", $2 }"; }
	verdict() {
		if awk "BEGIN { exit !($1) }"; then echo "met"; else echo "NOT MET"; fi
	}
	[ "${BENCH_BIG_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
fi

big_n=${BENCH_BIG_N:-1000000}
big_small_n=${BENCH_BIG_SMALL_N:-100000}
# The report's page opened headless, when chromium is there: how long it
# may take before the bench gives up on it (it is reported, not asserted).
big_browser_timeout=${BENCH_BIG_BROWSER_TIMEOUT:-180}

export BIG_DB=${BENCH_BIG_DB:-$tmp/big.db}
export BIG_SESSION=big BIG_SMALL_SESSION=big-small
# A HAR holds HTTP requests: the same sizes recorded over HTTP for it.
export BIG_HTTP_SESSION=big-http BIG_HTTP_SMALL_SESSION=big-http-small

# Record a session of N messages (N/2 echoed requests) as NAME into BIG_DB.
big_record() {
	local name=$1 n=$2 out rc
	out=$("$load" --scenario throughput --count $((n / 2)) -- \
	    "$mcpreel" record --db "$BIG_DB" --name "$name" -- "$echo_server" \
	    2>"$tmp/big-record-$name.err")
	rc=$?
	if [ $rc != 0 ]; then
		fail "big: recording $name exited $rc"
		sed 's/^/    /' "$tmp/big-record-$name.err" | tail -n 5
		return 1
	fi
	echo "  recorded $name: $n messages, $(sed -n 's/.*msgs_per_s=\([0-9.]*\).*/\1/p' <<<"$out") msgs/s"
}

# The port a server says it listens on in FILE, once it has said it.
big_port() {
	local file=$1 port="" i
	for ((i = 0; i < ready_timeout * 20; i++)); do
		port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$file" | head -n 1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	echo "$port"
}

# Record a session of N messages over HTTP as NAME into BIG_DB, through
# 'record --listen' in front of bench/http_echo (4 connections).
big_record_http() {
	local name=$1 n=$2 line port epid mpid rc out
	"$http_echo" >"$tmp/big-http-echo.out" 2>&1 &
	epid=$!
	port=$(big_port "$tmp/big-http-echo.out")
	if [ -z "$port" ]; then
		kill -TERM "$epid" 2>/dev/null
		wait "$epid" 2>/dev/null
		fail "big: bench/http_echo did not say its port within ${ready_timeout}s"
		return 1
	fi
	"$mcpreel" record --db "$BIG_DB" --name "$name" --listen 127.0.0.1:0 \
	    --upstream "http://127.0.0.1:$port" >"$tmp/big-http-rec.out" 2>&1 &
	mpid=$!
	line=$(big_port "$tmp/big-http-rec.out")
	out=$("$http_load" --scenario throughput --count $((n / 2)) --conns 4 --timeout 3600 \
	    "http://127.0.0.1:$line/mcp" 2>"$tmp/big-http-load.err")
	rc=$?
	kill -TERM "$mpid" 2>/dev/null
	wait "$mpid" 2>/dev/null
	kill -TERM "$epid" 2>/dev/null
	wait "$epid" 2>/dev/null
	if [ $rc != 0 ] || [ -z "$port" ] || [ -z "$line" ]; then
		fail "big: recording $name over HTTP failed (load exited $rc)"
		tail -n 5 "$tmp/big-http-load.err" "$tmp/big-http-rec.out" | sed 's/^/    /'
		return 1
	fi
	echo "  recorded $name over HTTP: $n messages, $(sed -n 's/.*msgs_per_s=\([0-9.]*\).*/\1/p' <<<"$out") requests/s"
}

# Time one command: KEY SESSION-SIZE CMD...; its output to $tmp/big.out
# (the command line says where), "wall rss_kb" in big[KEY.SIZE].
declare -A big
big_time() {
	local key=$1 size=$2 rc
	shift 2
	/usr/bin/time -f '%e %M' -o "$tmp/big.time" "$@" >"$tmp/big.out" \
	    2>"$tmp/big.err"
	rc=$?
	if [ $rc != 0 ]; then
		fail "big: $key on $size exited $rc: $*"
		sed 's/^/    /' "$tmp/big.err" | tail -n 3
		big[$key.$size]="- -"
		return 1
	fi
	big[$key.$size]=$(tail -n 1 "$tmp/big.time")
}

# The commands, with the session name last (set by big_run).
big_cmds=(
	"show-first-page|show --db DB --until #50 S"
	"show|show --db DB S"
	"show --json|show --db DB --json S"
	"stats|stats --db DB S"
	"export jsonl|export --db DB --format jsonl S"
	"export har|export --db DB --format har H"
	"report|report --db DB -o OUT S"
)

# Run every command on session S (H: the HTTP session HS, for the HAR;
# SIZE names them in big[]).
big_run() {
	local size=$1 s=$2 hs=$3 c key argv a
	for c in "${big_cmds[@]}"; do
		key=${c%%|*}
		argv=()
		for a in ${c#*|}; do
			case "$a" in
			DB) argv+=("$BIG_DB") ;;
			S) argv+=("$s") ;;
			H) argv+=("$hs") ;;
			OUT) argv+=("$tmp/big-report-$size.html") ;;
			*) argv+=("$a") ;;
			esac
		done
		big_time "$key" "$size" "$mcpreel" "${argv[@]}"
	done
}

echo "running big sessions: recording $big_small_n and $big_n messages, over stdio and HTTP ..."
if ! command -v /usr/bin/time >/dev/null 2>&1; then
	fail "big: /usr/bin/time is missing (scripts/deps.sh bench installs it)"
else
	# BENCH_BIG_DB names a database to keep: its sessions are reused.
	[ -n "${BENCH_BIG_DB:-}" ] || rm -f "$BIG_DB"
	big_ok=1
	for s in "$BIG_SMALL_SESSION:$big_small_n:big_record" "$BIG_SESSION:$big_n:big_record" \
	    "$BIG_HTTP_SMALL_SESSION:$big_small_n:big_record_http" \
	    "$BIG_HTTP_SESSION:$big_n:big_record_http"; do
		IFS=: read -r name n how <<<"$s"
		if [ -s "$BIG_DB" ] && "$mcpreel" sessions --db "$BIG_DB" --json 2>/dev/null |
		    grep -q "\"name\":\"$name\".*\"messages\":$n,"; then
			echo "  reusing $name in $BIG_DB"
			continue
		fi
		"$how" "$name" "$n" || { big_ok=0; break; }
	done
fi
if [ "${big_ok:-0}" = 1 ]; then
	big_run small "$BIG_SMALL_SESSION" "$BIG_HTTP_SMALL_SESSION"
	big_run big "$BIG_SESSION" "$BIG_HTTP_SESSION"
	echo
	echo "big session: $big_small_n and $big_n messages (database $(calc "%.0f MiB" \
	    "$(stat -c %s "$BIG_DB") / 1048576")); output to files or /dev/null"
	printf "%-18s | %10s | %11s | %10s | %11s | %9s | %s\n" "command" \
	    "$((big_small_n / 1000))k wall" "$((big_small_n / 1000))k RSS" \
	    "$((big_n / 1000))k wall" "$((big_n / 1000))k RSS" "RSS ratio" \
	    "flat (<= 2x)"
	big_flat=1
	for c in "${big_cmds[@]}"; do
		key=${c%%|*}
		read -r ws rs <<<"${big[$key.small]}"
		read -r wb rb <<<"${big[$key.big]}"
		if [ "$rs" = - ] || [ "$rb" = - ]; then
			ratio=-; flat="not measured"; big_flat=0
		else
			ratio=$(calc "%.2fx" "$rb / $rs")
			flat=$(verdict "$rb <= 2 * $rs")
			[ "$flat" = met ] || big_flat=0
		fi
		printf "%-18s | %9ss | %7s MiB | %9ss | %7s MiB | %9s | %s\n" "$key" \
		    "$ws" "$([ "$rs" = - ] && echo - || calc "%.1f" "$rs / 1024")" \
		    "$wb" "$([ "$rb" = - ] && echo - || calc "%.1f" "$rb / 1024")" \
		    "$ratio" "$flat"
	done
	page="$tmp/big-report-big.html"
	if [ -s "$page" ]; then
		echo "report page: $(calc "%.1f MiB" "$(stat -c %s "$page") / 1048576")" \
		    "for $big_n messages ($(calc "%.1f MiB" \
		    "$(stat -c %s "$tmp/big-report-small.html") / 1048576") for $big_small_n)"
		browser=$(command -v chromium || command -v chromium-browser || true)
		if [ -n "$browser" ]; then
			prof=$(mktemp -d "$tmp/chromium.XXXXXX")
			t0=$(date +%s.%N)
			if timeout "$big_browser_timeout" "$browser" --headless \
			    --no-sandbox --disable-gpu --no-first-run --disable-extensions \
			    --disable-dev-shm-usage --user-data-dir="$prof" \
			    --virtual-time-budget=1000 --dump-dom "file://$page" \
			    >"$tmp/big-dom.html" 2>/dev/null; then
				t1=$(date +%s.%N)
				ms=$(sed -n 's/.*data-rendered-ms="\([0-9]*\)".*/\1/p' "$tmp/big-dom.html" | head -n 1)
				echo "report page headless ($browser): first page drawn ${ms:-?} ms after" \
				    "the load began ($(calc "%.1f s" "$t1 - $t0") with start-up and the dump)," \
				    "$(grep -o '<div class="row' "$tmp/big-dom.html" | wc -l) rows in its DOM"
			else
				echo "report page headless: did not render within ${big_browser_timeout}s"
			fi
		else
			echo "report page headless: not measured (chromium not installed)"
		fi
	fi
	echo "target:"
	printf "  %-50s %-36s %s\n" "big session: every reader's RSS flat (<= 2x)" \
	    "$big_small_n -> $big_n messages" "$([ $big_flat = 1 ] && echo met || echo "NOT MET")"
	echo
fi
