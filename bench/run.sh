#!/bin/bash
# The benchmark of issue 6: mcpreel against a direct connection, in the
# same run, over stdio and HTTP, and a table of the figures against the
# targets.  Usage: bench/run.sh [BUILD_DIR]   (make bench builds and runs it)
#
# Every scenario runs direct (load client to echo server) and through
# `mcpreel record` with a fresh database, which is then checked to hold
# every message (2 per round trip).  Timings are only reported: the exit
# status is 0 unless something broke (a scenario failed or rows are
# missing).  Counts can be changed through the environment, e.g.
# BENCH_THROUGHPUT_N=100000 bench/run.sh build-bench.
set -u

build=${1:-build-bench}
mcpreel=$build/mcpreel
load=$build/bench/load
echo_server=$build/bench/echo_server
http_echo=$build/bench/http_echo
http_load=$build/bench/http_load

# Issue 6's counts.  The mitmdump runs are shorter: it is two orders of
# magnitude slower and the harness must finish in minutes; they measure
# rates and percentiles, which do not depend on the count.
latency_n=${BENCH_LATENCY_N:-20000}
throughput_n=${BENCH_THROUGHPUT_N:-300000}
large_size=${BENCH_LARGE_SIZE:-64M}
linear_sizes=${BENCH_LINEAR_SIZES:-8M 16M 32M}
http_latency_n=${BENCH_HTTP_LATENCY_N:-5000}
http_throughput_n=${BENCH_HTTP_THROUGHPUT_N:-100000}
http_conns=${BENCH_HTTP_CONNS:-4}
mitm_latency_n=${BENCH_MITM_LATENCY_N:-2000}
mitm_throughput_n=${BENCH_MITM_THROUGHPUT_N:-10000}
# The cassette mock opens (bench/cassette_bench): its messages.
cassette_n=${BENCH_CASSETTE_N:-100000}
# How long a server gets to say it is listening.
ready_timeout=${BENCH_READY_TIMEOUT:-15}

for f in "$mcpreel" "$load" "$echo_server" "$http_echo" "$http_load" "$build/bench/check_bench" \
    "$build/bench/cassette_bench"; do
	if [ ! -x "$f" ]; then
		echo "bench: $f is missing: build first (make bench, or cmake" \
		    "-S . -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpreel-bench.XXXXXX") || exit 1
broken=0
pids=""

# Stop what we started, by pid; keep the logs when something broke.
cleanup() {
	local p
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	if [ "$broken" = 0 ]; then
		rm -rf "$tmp"
	else
		echo "bench: logs and databases kept in $tmp" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Note that something broke, with the reason, for the table and the status.
fail() {
	broken=1
	echo "FAIL: $*"
}

# The value of KEY in a key=value line.
kv() {
	local line=$1 key=$2
	sed -n "s/.*\\b$key=\\([^ ]*\\).*/\\1/p" <<<"$line"
}

# Print an awk expression's value with a printf format.
calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}

# Run a load client: NAME ARGS...; its line in $out, 1 if it failed.
run() {
	local name=$1
	shift
	out=$("$@" 2>"$tmp/$name.err")
	local rc=$?
	if [ $rc != 0 ] || [ -z "$out" ]; then
		fail "$name: exited $rc: $*"
		sed 's/^/    /' "$tmp/$name.err" | tail -n 5
		out=""
		return 1
	fi
	return 0
}

# Count the messages recorded in DB, and those the writer lost.
count_rows() {
	local db=$1
	if command -v sqlite3 >/dev/null 2>&1; then
		sqlite3 "$db" "SELECT (SELECT count(*) FROM messages) || ' ' ||
		    (SELECT coalesce(sum(messages_lost), 0) FROM sessions)"
	else
		# No sqlite3 shell: mcpreel's own session list has the counts.
		"$mcpreel" sessions --db "$db" --json | awk '
		    { match($0, /"messages":[0-9]+/); m += substr($0, RSTART + 11, RLENGTH - 11)
		      match($0, /"messages_lost":[0-9]+/); l += substr($0, RSTART + 16, RLENGTH - 16) }
		    END { print m + 0, l + 0 }'
	fi
}

# Check DB holds EXPECTED messages; the table's cell in $rows.
check_rows() {
	local name=$1 db=$2 expected=$3 got lost
	read -r got lost <<<"$(count_rows "$db" 2>"$tmp/$name.sql.err")"
	if [ -z "${got:-}" ]; then
		fail "$name: cannot count the rows of $db: $(head -n 1 "$tmp/$name.sql.err")"
		rows="? ($expected) FAIL"
		return
	fi
	if [ "$got" = "$expected" ] && [ "${lost:-0}" = 0 ]; then
		rows="$got ($expected) ok"
	else
		fail "$name: $got of $expected messages recorded, $lost lost by the writer"
		rows="$got ($expected) FAIL"
	fi
}

# Start a server whose address comes on its output: NAME PATTERN CMD...;
# its pid in $spid and port in $sport.
start_server() {
	local name=$1 pattern=$2 i
	shift 2
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	spid=$!
	pids="$pids $spid"
	sport=""
	for ((i = 0; i < ready_timeout * 20; i++)); do
		sport=$(sed -n "s|.*$pattern http://127.0.0.1:\\([0-9]*\\).*|\\1|p" \
		    "$tmp/$name.out" "$tmp/$name.err" | head -n 1)
		[ -n "$sport" ] && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	fail "$name: did not say it was listening within ${ready_timeout}s: $*"
	sed 's/^/    /' "$tmp/$name.err" | tail -n 5
	stop_server "$spid"
	return 1
}

# Stop a server we started with SIGTERM and wait for it; its status in $?.
stop_server() {
	local p=$1 rc
	kill -TERM "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	rc=$?
	pids=$(sed "s/\\b$p\\b//" <<<"$pids")
	return $rc
}

# The peak RSS of a running process, in KiB.
peak_rss() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# KiB to a readable MiB figure.
mib() {
	[ -z "$1" ] && { echo "-"; return; }
	calc "%.1f MiB" "$1 / 1024"
}

# A size with k/M/G to bytes.
bytes_of() {
	local s=$1
	case "$s" in
	*[kK]) echo $((${s%?} * 1024)) ;;
	*[mM]) echo $((${s%?} * 1024 * 1024)) ;;
	*[gG]) echo $((${s%?} * 1024 * 1024 * 1024)) ;;
	*) echo "$s" ;;
	esac
}

# met or NOT MET for a condition computed by awk.
verdict() {
	if awk "BEGIN { exit !($1) }"; then echo "met"; else echo "NOT MET"; fi
}

# The machine, so figures are read against it.
echo "mcpreel benchmark"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "$(uname -sr), $(date '+%Y-%m-%d %H:%M:%S %Z')"
echo "mcpreel: $mcpreel ($(grep -m 1 '^CMAKE_BUILD_TYPE' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || echo '?') build)"
echo "load: ${latency_n} round trips of 200 B (latency), ${throughput_n} requests of 200 B pipelined" \
    "(throughput), one of $large_size (large); HTTP: $http_latency_n round trips, $http_throughput_n" \
    "requests over $http_conns connections"
echo

# --- stdio ---------------------------------------------------------------

declare -A r	# results: r[scenario.mode.key]

# Run a stdio scenario direct and through mcpreel: NAME SCENARIO ARGS...
stdio_pair() {
	local name=$1 scenario=$2 db
	shift 2
	if run "$name-direct" "$load" --scenario "$scenario" "$@" -- "$echo_server"; then
		r[$name.direct]=$out
	fi
	db="$tmp/$name.db"
	if run "$name-mcpreel" "$load" --scenario "$scenario" "$@" -- \
	    "$mcpreel" record --db "$db" --name "bench-$name" -- "$echo_server"; then
		r[$name.mcpreel]=$out
		check_rows "$name" "$db" $((2 * $(kv "$out" sent)))
		r[$name.rows]=$rows
	else
		r[$name.rows]="- FAIL"
	fi
}

# A large-message scenario varies from run to run by 2-4x here (the first
# touch of a fresh mapping, the page cache, the machine's neighbours): run
# it large_runs times each way and keep the run with the median MB/s (peak
# RSS: the highest of them); every run's figure is printed.
large_runs=${BENCH_LARGE_RUNS:-3}
large_pair() {
	local name=$1 mode i line lines figs rss k
	shift
	for ((i = 1; i <= large_runs; i++)); do
		# The last run's database (two copies of the message) is
		# still being written back: not during this one.
		sync
		stdio_pair "$name-run$i" large "$@"
	done
	for mode in direct mcpreel; do
		lines=""
		figs=""
		rss=0
		for ((i = 1; i <= large_runs; i++)); do
			line=${r[$name-run$i.$mode]:-}
			[ -z "$line" ] && continue
			lines="$lines$(kv "$line" mb_per_s) $i"$'\n'
			figs="$figs $(kv "$line" mb_per_s)"
			k=$(kv "$line" rss_kb)
			[ -n "$k" ] && [ "$k" -gt "$rss" ] && rss=$k
		done
		[ -z "$lines" ] && continue
		i=$(sort -n <<<"${lines%$'\n'}" |
		    awk '{ a[NR] = $2 } END { print a[int((NR + 1) / 2)] }')
		r[$name.$mode]=$(sed "s/rss_kb=[0-9]*/rss_kb=$rss/" \
		    <<<"${r[$name-run$i.$mode]}")
		echo "  $name $mode: MB/s in $large_runs runs:$figs (the median is kept)"
	done
	# The rows of every run were checked; the table shows the worst.
	r[$name.rows]=${r[$name-run1.rows]:-}
	for ((i = 2; i <= large_runs; i++)); do
		case "${r[$name-run$i.rows]:-}" in
		*FAIL*) r[$name.rows]=${r[$name-run$i.rows]} ;;
		esac
	done
}

# Through mcpreel record --otlp URL: NAME SCENARIO URL ARGS...; the spans
# the session's row counts as not delivered in r[NAME.dropped].
stdio_otlp() {
	local name=$1 scenario=$2 url=$3 db
	shift 3
	db="$tmp/$name.db"
	if run "$name-mcpreel" "$load" --scenario "$scenario" "$@" -- \
	    "$mcpreel" record --db "$db" --name "bench-$name" --otlp "$url" -- \
	    "$echo_server"; then
		r[$name.mcpreel]=$out
		check_rows "$name" "$db" $((2 * $(kv "$out" sent)))
		r[$name.rows]=$rows
		r[$name.dropped]=$(sqlite3 "$db" "SELECT otlp_dropped FROM sessions" \
		    2>/dev/null)
	else
		r[$name.rows]="- FAIL"
	fi
}

echo "running stdio: latency, throughput, large ..."
stdio_pair latency latency --count "$latency_n"
stdio_pair throughput throughput --count "$throughput_n"
# The same with OpenTelemetry export, beside the plain runs: to a
# collector that answers 200 at once (bench/otlp_sink.py), and to one that
# is down (a closed port: every span is dropped and counted).
echo "running stdio with --otlp: latency, throughput, to a collector up and down ..."
otlp_up=""
otlp_down=""
if start_server otlp-sink "otlp_sink: listening on" python3 "$(dirname "$0")/otlp_sink.py"; then
	otlp_up="http://127.0.0.1:$sport"
	otlp_pid=$spid
fi
# A closed port: a throwaway listener's, stopped.
if start_server otlp-probe "otlp_sink: listening on" python3 "$(dirname "$0")/otlp_sink.py"; then
	otlp_down="http://127.0.0.1:$sport"
	stop_server "$spid"
fi
for mode in up down; do
	url=$otlp_up
	[ $mode = down ] && url=$otlp_down
	[ -z "$url" ] && continue
	stdio_otlp "latency-otlp-$mode" latency "$url" --count "$latency_n"
	stdio_otlp "throughput-otlp-$mode" throughput "$url" --count "$throughput_n"
done
[ -n "$otlp_up" ] && stop_server "$otlp_pid"
large_pair large --size "$large_size"
echo "running framing linearity: large at $linear_sizes ..."
for s in $linear_sizes; do
	large_pair "large-$s" --size "$s" --timeout 60
done

# --- HTTP ----------------------------------------------------------------

echo "running HTTP: latency, throughput ..."
http_url=""
if start_server http-echo "http_echo: listening on" "$http_echo"; then
	echo_port=$sport
	echo_pid=$spid
	http_url="http://127.0.0.1:$echo_port/mcp"
fi

# Run an HTTP scenario against a URL: NAME SCENARIO COUNT URL.
http_run() {
	local name=$1 scenario=$2 count=$3 url=$4
	run "$name" "$http_load" --scenario "$scenario" --count "$count" \
	    --conns "$http_conns" "$url"
}

# Run an HTTP scenario through a fresh mcpreel: NAME SCENARIO COUNT.
http_mcpreel() {
	local name=$1 scenario=$2 count=$3 db="$tmp/$1.db" mpid rss
	if ! start_server "$name-proxy" "mcpreel: listening on" "$mcpreel" record \
	    --db "$db" --name "bench-$name" --listen 127.0.0.1:0 \
	    --upstream "http://127.0.0.1:$echo_port"; then
		r[$name.rows]="- FAIL"
		return
	fi
	mpid=$spid
	if http_run "$name-mcpreel" "$scenario" "$count" "http://127.0.0.1:$sport/mcp"; then
		r[$name.mcpreel]=$out
	fi
	rss=$(peak_rss "$mpid")
	r[$name.rss]=$rss
	if ! stop_server "$mpid"; then
		fail "$name: mcpreel did not exit 0 on SIGTERM"
		sed 's/^/    /' "$tmp/$name-proxy.err" | tail -n 5
	fi
	if [ -n "${r[$name.mcpreel]:-}" ]; then
		check_rows "$name" "$db" $((2 * $(kv "${r[$name.mcpreel]}" sent)))
		r[$name.rows]=$rows
	else
		r[$name.rows]="- FAIL"
	fi
}

if [ -n "$http_url" ]; then
	http_run http-latency-direct latency "$http_latency_n" "$http_url" &&
	    r[http-latency.direct]=$out
	http_mcpreel http-latency latency "$http_latency_n"
	http_run http-throughput-direct throughput "$http_throughput_n" "$http_url" &&
	    r[http-throughput.direct]=$out
	http_mcpreel http-throughput throughput "$http_throughput_n"
fi

# mitmdump, when installed, as a reference proxy for HTTP.
mitm=0
if [ -n "$http_url" ] && command -v mitmdump >/dev/null 2>&1; then
	mitm=1
	echo "running HTTP through mitmdump ($mitm_latency_n and $mitm_throughput_n requests) ..."
	# A free port: let the kernel pick one for a throwaway listener.
	mitm_port=""
	if start_server port-probe "http_echo: listening on" "$http_echo"; then
		mitm_port=$sport
		stop_server "$spid"
	fi
	if [ -n "$mitm_port" ]; then
		mitmdump --mode "reverse:http://127.0.0.1:$echo_port" --listen-host 127.0.0.1 \
		    --listen-port "$mitm_port" -w "$tmp/mitm.flows" -q \
		    >"$tmp/mitmdump.out" 2>"$tmp/mitmdump.err" &
		mpid=$!
		pids="$pids $mpid"
		ready=0
		for ((i = 0; i < ready_timeout * 20; i++)); do
			kill -0 "$mpid" 2>/dev/null || break
			if (exec 3<>"/dev/tcp/127.0.0.1/$mitm_port") 2>/dev/null; then
				ready=1
				break
			fi
			sleep 0.05
		done
		if [ $ready = 1 ]; then
			http_run http-latency-mitm latency "$mitm_latency_n" \
			    "http://127.0.0.1:$mitm_port/mcp" && r[http-latency.mitm]=$out
			r[mitm.rss]=$(peak_rss "$mpid")
			http_run http-throughput-mitm throughput "$mitm_throughput_n" \
			    "http://127.0.0.1:$mitm_port/mcp" && r[http-throughput.mitm]=$out
			r[mitm.rss]=$(peak_rss "$mpid")
		else
			fail "mitmdump did not listen on 127.0.0.1:$mitm_port within ${ready_timeout}s"
			sed 's/^/    /' "$tmp/mitmdump.err" | tail -n 5
		fi
		stop_server "$mpid"
	fi
fi
[ -n "$http_url" ] && stop_server "$echo_pid"
echo

# --- the table -----------------------------------------------------------

# A figure from a result line, or "-" when the run failed.
fig() {
	local line=${r[$1]:-} v
	[ -z "$line" ] && { echo "-"; return; }
	v=$(kv "$line" "$2")
	echo "${v:--}"
}

# The difference of two figures with a unit, or "-".
added() {
	[ "$1" = - ] || [ "$2" = - ] && { echo "-"; return; }
	calc "%+.1f $3" "$2 - $1"
}

# b as a percentage of a, or "-".
pct() {
	[ "$1" = - ] || [ "$2" = - ] && { echo "-"; return; }
	calc "%.1f%% of direct" "100 * $2 / $1"
}

# A table line: the mitmdump column only when it ran.
line() {
	if [ $mitm = 1 ]; then
		printf "%-28s | %12s | %15s | %18s | %18s | %26s | %22s\n" "$@"
	else
		printf "%-28s | %12s | %15s | %18s | %18s | %26s\n" "${@:1:6}"
	fi
}

large_bytes=$(bytes_of "$large_size")

lat_p50_d=$(fig latency.direct p50_us);  lat_p50_m=$(fig latency.mcpreel p50_us)
lat_p99_d=$(fig latency.direct p99_us);  lat_p99_m=$(fig latency.mcpreel p99_us)
lat_mean_d=$(fig latency.direct mean_us); lat_mean_m=$(fig latency.mcpreel mean_us)
lat_rss=$(fig latency.mcpreel rss_kb)
tp_d=$(fig throughput.direct msgs_per_s); tp_m=$(fig throughput.mcpreel msgs_per_s)
tp_rss=$(fig throughput.mcpreel rss_kb)
lg_d=$(fig large.direct mb_per_s); lg_m=$(fig large.mcpreel mb_per_s)
lg_rss=$(fig large.mcpreel rss_kb)
hl_p50_d=$(fig http-latency.direct p50_us); hl_p50_m=$(fig http-latency.mcpreel p50_us)
hl_p99_d=$(fig http-latency.direct p99_us); hl_p99_m=$(fig http-latency.mcpreel p99_us)
hl_p50_x=$(fig http-latency.mitm p50_us); hl_p99_x=$(fig http-latency.mitm p99_us)
ht_d=$(fig http-throughput.direct msgs_per_s); ht_m=$(fig http-throughput.mcpreel msgs_per_s)
ht_x=$(fig http-throughput.mitm msgs_per_s)

lg_rss_x="-"
[ "$lg_rss" != - ] && lg_rss_x=$(calc "%.2fx msg" "$lg_rss * 1024 / $large_bytes")

line "scenario" "direct" "through mcpreel" "added / ratio" "mcpreel peak RSS" \
    "recorded rows (expected)" "mitmdump"
line "----------------------------" "------------" "---------------" \
    "------------------" "------------------" "--------------------------" \
    "----------------------"
line "stdio latency p50 (us)" "$lat_p50_d" "$lat_p50_m" "$(added "$lat_p50_d" "$lat_p50_m" us)" \
    "$(mib "${lat_rss/-/}")" "${r[latency.rows]:--}" "-"
line "stdio latency p99 (us)" "$lat_p99_d" "$lat_p99_m" "$(added "$lat_p99_d" "$lat_p99_m" us)" "" "" "-"
line "stdio latency mean (us)" "$lat_mean_d" "$lat_mean_m" "$(added "$lat_mean_d" "$lat_mean_m" us)" "" "" "-"
line "stdio throughput (msgs/s)" "$tp_d" "$tp_m" "$(pct "$tp_d" "$tp_m")" \
    "$(mib "${tp_rss/-/}")" "${r[throughput.rows]:--}" "-"
line "stdio large $large_size (MB/s)" "$lg_d" "$lg_m" "$(pct "$lg_d" "$lg_m")" \
    "$(mib "${lg_rss/-/}") $lg_rss_x" "${r[large.rows]:--}" "-"
hl_rss=${r[http-latency.rss]:-}; ht_rss=${r[http-throughput.rss]:-}
line "HTTP latency p50 (us)" "$hl_p50_d" "$hl_p50_m" "$(added "$hl_p50_d" "$hl_p50_m" us)" \
    "$(mib "$hl_rss")" "${r[http-latency.rows]:--}" "$hl_p50_x ($(added "$hl_p50_d" "$hl_p50_x" us))"
line "HTTP latency p99 (us)" "$hl_p99_d" "$hl_p99_m" "$(added "$hl_p99_d" "$hl_p99_m" us)" "" "" \
    "$hl_p99_x ($(added "$hl_p99_d" "$hl_p99_x" us))"
line "HTTP throughput (msgs/s)" "$ht_d" "$ht_m" "$(pct "$ht_d" "$ht_m")" \
    "$(mib "$ht_rss")" "${r[http-throughput.rows]:--}" "$ht_x ($(pct "$ht_d" "$ht_x" | cut -d' ' -f1))"
if [ $mitm = 0 ]; then
	echo "mitmdump: not installed"
else
	echo "mitmdump: peak RSS $(mib "${r[mitm.rss]:-}"), $mitm_latency_n latency and $mitm_throughput_n throughput requests"
fi
echo "(MB/s are 10^6 bytes of request and response per second of the round trip; msgs/s count both directions)"
echo

# --otlp beside the plain recording, from the same run.
otlp_line() {
	printf "%-28s | %15s | %22s | %22s\n" "$@"
}
otlp_cell() {
	local name=$1 key=$2 v
	v=$(fig "$name.mcpreel" "$key")
	echo "$v (dropped ${r[$name.dropped]:--})"
}
echo "OpenTelemetry export (record --otlp), beside the plain recording above:"
otlp_line "scenario" "recorded" "+ --otlp, collector 200" "+ --otlp, collector down"
otlp_line "----------------------------" "---------------" "----------------------" \
    "----------------------"
otlp_line "stdio latency p50 (us)" "$lat_p50_m" "$(otlp_cell latency-otlp-up p50_us)" \
    "$(otlp_cell latency-otlp-down p50_us)"
otlp_line "stdio latency p99 (us)" "$lat_p99_m" "$(fig latency-otlp-up.mcpreel p99_us)" \
    "$(fig latency-otlp-down.mcpreel p99_us)"
otlp_line "stdio throughput (msgs/s)" "$tp_m" "$(otlp_cell throughput-otlp-up msgs_per_s)" \
    "$(otlp_cell throughput-otlp-down msgs_per_s)"
otlp_line "peak RSS latency/throughput" "$(mib "${lat_rss/-/}")/$(mib "${tp_rss/-/}")" \
    "$(mib "$(fig latency-otlp-up.mcpreel rss_kb | tr -d -)")/$(mib "$(fig throughput-otlp-up.mcpreel rss_kb | tr -d -)")" \
    "$(mib "$(fig latency-otlp-down.mcpreel rss_kb | tr -d -)")/$(mib "$(fig throughput-otlp-down.mcpreel rss_kb | tr -d -)")"
otlp_line "recorded rows" "${r[throughput.rows]:--}" "${r[throughput-otlp-up.rows]:--}" \
    "${r[throughput-otlp-down.rows]:--}"
echo "(dropped: the session's otlp_dropped, spans the collector did not get: a full"
echo " exporter queue drops rather than slow forwarding; a closed port drops them all)"
echo

# --- framing linearity ---------------------------------------------------

echo "framing linearity: one message of each size through mcpreel (the cost per MiB should stay flat)"
printf "%-8s | %12s | %15s | %16s | %20s | %s\n" "size" "direct MB/s" "mcpreel MB/s" \
    "mcpreel ms/MiB" "peak RSS" "rows"
first_cost=""
last_cost=""
for s in $linear_sizes "$large_size"; do
	key="large-$s"
	[ "$s" = "$large_size" ] && key=large
	d=$(fig "$key.direct" mb_per_s)
	m=$(fig "$key.mcpreel" mb_per_s)
	el=$(fig "$key.mcpreel" elapsed_s)
	rss=$(fig "$key.mcpreel" rss_kb)
	b=$(bytes_of "$s")
	cost="-"
	[ "$el" != - ] && cost=$(calc "%.2f" "$el * 1000 / ($b / 1048576)")
	[ -z "$first_cost" ] && first_cost=$cost
	last_cost=$cost
	rssx="-"
	[ "$rss" != - ] && rssx="$(mib "$rss") ($(calc "%.2fx" "$rss * 1024 / $b"))"
	printf "%-8s | %12s | %15s | %16s | %20s | %s\n" "$s" "$d" "$m" "$cost" "$rssx" \
	    "${r[$key.rows]:--}"
done
if [ "$first_cost" != - ] && [ "$last_cost" != - ] && [ -n "$first_cost" ]; then
	growth=$(calc "%.2f" "$last_cost / $first_cost")
	if awk "BEGIN { exit !($growth <= 1.5) }"; then
		echo "linear: the cost per MiB at $large_size is ${growth}x that at ${linear_sizes%% *}"
	else
		echo "NOT linear: the cost per MiB grows ${growth}x from ${linear_sizes%% *} to $large_size"
	fi
fi
echo

. "$(dirname "$0")/scen_stdio.sh"

# --- check ---------------------------------------------------------------

# mcpreel check's rules over a session built in memory (bench/check_bench):
# messages per second of wall clock and of CPU time, and the peak RSS.
check_n=${BENCH_CHECK_N:-1000000}
echo "check: $check_n messages through check/ ..."
chk_rate=-; chk_cpu=-; chk_rss=-
if chk_out=$("$build/bench/check_bench" "$check_n"); then
	echo "$chk_out"
	chk_rate=$(echo "$chk_out" | sed -n 's/.*: \([0-9]*\) messages\/s.*/\1/p')
	chk_cpu=$(echo "$chk_out" | sed -n 's/.*(\([0-9]*\) per CPU second).*/\1/p')
	chk_rss=$(echo "$chk_out" | sed -n 's/.*peak RSS \([0-9]*\) KiB.*/\1/p')
else
	echo "FAIL: check_bench: $chk_out"
	broken=1
fi
# The same session recorded: imported into a database and read back by
# 'mcpreel check' itself (SQLite reads, the checker, the summary).
echo "check: the same $check_n messages imported, then 'mcpreel check' ..."
cdb_rate=-; cdb_rss=-
if "$build/bench/check_bench" --jsonl "$check_n" > "$tmp/check.jsonl" &&
    "$mcpreel" import --db "$tmp/check.db" "$tmp/check.jsonl" > /dev/null 2>&1; then
	rm -f "$tmp/check.jsonl"
	t0=$(date +%s%N)
	"$mcpreel" check --db "$tmp/check.db" 1 > "$tmp/check.out" 2>&1 &
	cpid=$!; cdb_rss=0
	while kill -0 "$cpid" 2>/dev/null; do
		k=$(peak_rss "$cpid"); [ -n "$k" ] && [ "$k" -gt "$cdb_rss" ] && cdb_rss=$k
		sleep 0.05
	done
	wait "$cpid"; crc=$?
	t1=$(date +%s%N)
	if [ $crc = 0 ]; then
		cdb_rate=$(( check_n * 1000000000 / (t1 - t0) ))
		echo "mcpreel check: $(tail -n 1 "$tmp/check.out")"
		echo "mcpreel check: $cdb_rate messages/s wall, peak RSS $cdb_rss KiB (sampled)"
	else
		echo "FAIL: mcpreel check exited $crc: $(tail -n 3 "$tmp/check.out")"
		broken=1
	fi
else
	echo "FAIL: the check session could not be written or imported"
	broken=1
fi
echo

# --- cassette ------------------------------------------------------------

# A cassette of $cassette_n messages (a handshake, then tools/call requests
# of ~250 B answered with ~1 KiB of text) served by 'mcpreel mock FILE':
# the time from its start until it has answered an initialize request over
# stdio, with its peak RSS; beside it, the same session from a database
# ('mcpreel mock --db DB 1'), both under the target.  Run three times
# each, the best kept (the machine's other load only ever adds).
echo "cassette: $cassette_n messages, from the file and from a database ..."
cas_file=-; cas_file_rss=-; cas_db=-; cas_db_rss=-
# Time CMD... three times: the best ready_ms and its rss_kb in $best.
best_of3() {
	local i line ms b=
	best=
	for i in 1 2 3; do
		line=$("$build/bench/cassette_bench" -- "$@" 2>>"$tmp/cassette.log") || return 1
		ms=$(kv "$line" ready_ms)
		if [ -z "$b" ] || awk "BEGIN { exit !($ms < $b) }"; then
			b=$ms; best=$line
		fi
	done
}
if "$build/bench/cassette_bench" --jsonl "$cassette_n" > "$tmp/cassette.jsonl" &&
    "$mcpreel" import --db "$tmp/cassette.db" "$tmp/cassette.jsonl" > /dev/null 2>&1; then
	if best_of3 "$mcpreel" mock "$tmp/cassette.jsonl"; then
		cas_file=$(kv "$best" ready_ms); cas_file_rss=$(kv "$best" rss_kb)
		echo "mock CASSETTE: ready in $cas_file ms, peak RSS $cas_file_rss KiB" \
		    "($(du -k "$tmp/cassette.jsonl" | cut -f1) KiB file)"
	else
		fail "mock of the cassette did not answer: $(tail -n 3 "$tmp/cassette.log")"
	fi
	if best_of3 "$mcpreel" mock --db "$tmp/cassette.db" 1; then
		cas_db=$(kv "$best" ready_ms); cas_db_rss=$(kv "$best" rss_kb)
		echo "mock --db DB 1: ready in $cas_db ms, peak RSS $cas_db_rss KiB"
	else
		fail "mock of the imported session did not answer: $(tail -n 3 "$tmp/cassette.log")"
	fi
	rm -f "$tmp/cassette.jsonl" "$tmp/cassette.db"*
else
	fail "the cassette could not be written or imported"
fi
echo

source "$(dirname "$0")/scen_peers.sh"	# the proxies a user could pick instead (report only)

# --- targets -------------------------------------------------------------

# Whether any of the figures is missing.
missing() {
	local v
	for v in "$@"; do
		[ "$v" = - ] || [ -z "$v" ] && return 0
	done
	return 1
}

# A target line: DESCRIPTION FIGURE CONDITION (awk) FIGURES-IT-NEEDS...
report() {
	local what=$1 figure=$2 cond=$3
	shift 3
	if missing "$@"; then
		printf "  %-50s %-36s %s\n" "$what" "$figure" "not measured (a run failed)"
	else
		printf "  %-50s %-36s %s\n" "$what" "$figure" "$(verdict "$cond")"
	fi
}
echo "targets:"
a50=$(added "$lat_p50_d" "$lat_p50_m" us); a99=$(added "$lat_p99_d" "$lat_p99_m" us)
report "added latency p50 <= 15 us" "$a50" "$lat_p50_m - $lat_p50_d <= 15" "$lat_p50_d" "$lat_p50_m"
report "added latency p99 <= 150 us" "$a99" "$lat_p99_m - $lat_p99_d <= 150" "$lat_p99_d" "$lat_p99_m"
report ">= 400000 msgs/s recorded and >= 25% of direct" "$tp_m msgs/s, $(pct "$tp_d" "$tp_m")" \
    "$tp_m >= 400000 && $tp_m >= 0.25 * $tp_d" "$tp_d" "$tp_m"
report "peak RSS <= 64 MiB in latency and throughput" \
    "$(mib "${lat_rss/-/}") and $(mib "${tp_rss/-/}")" \
    "$lat_rss <= 65536 && $tp_rss <= 65536" "$lat_rss" "$tp_rss"
report "$large_size message >= 500 MB/s and RSS <= 3x its size" "$lg_m MB/s, $lg_rss_x" \
    "$lg_m >= 500 && $lg_rss * 1024 <= 3 * $large_bytes" "$lg_m" "$lg_rss"
report "check: >= 200000 messages/s (1 M messages)" \
    "$chk_rate msgs/s ($chk_cpu per CPU s), $(mib "${chk_rss/-/}")" \
    "$chk_rate >= 200000" "$chk_rate"
report "check command on a recorded 1 M: >= 200000 msgs/s" \
    "$cdb_rate msgs/s, $(mib "${cdb_rss/-/}")" \
    "$cdb_rate >= 200000" "$cdb_rate"
report "mock of a $cassette_n-message cassette ready < 1 s" \
    "$cas_file ms, $(mib "${cas_file_rss/-/}") (db: $cas_db ms)" \
    "$cas_file < 1000 && $cas_db < 1000" "$cas_file" "$cas_db"
if [ $mitm = 1 ]; then
	report "HTTP: lower added p50 latency than mitmdump" \
	    "$(added "$hl_p50_d" "$hl_p50_m" us) vs $(added "$hl_p50_d" "$hl_p50_x" us)" \
	    "$hl_p50_m < $hl_p50_x" "$hl_p50_d" "$hl_p50_m" "$hl_p50_x"
else
	printf "  %-50s %-36s %s\n" "HTTP: lower added latency than mitmdump" "-" \
	    "not measured (mitmdump not installed)"
fi
echo

. "$(dirname "$0")/scen_http.sh"	# the HTTP recorder as a gateway
. "$(dirname "$0")/scen_sessions.sh"	# many concurrent sessions (prints its own table)
. "$(dirname "$0")/scen_retire.sh"	# many short sessions, one after another
. "$(dirname "$0")/scen_big.sh"	# big sessions in the commands that read them
. "$(dirname "$0")/scen_big_replay.sh"	# replay and mock of the same sessions

if [ "$broken" != 0 ]; then
	echo "bench: FAILED: a scenario did not run or rows are missing (see FAIL above)"
	exit 1
fi
echo "bench: all scenarios ran and every message was recorded"
exit 0
