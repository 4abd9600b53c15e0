# The proxies a user could pick instead of mcpreel, side by side with it
# in the same run.  Sourced by bench/run.sh after its HTTP scenarios; it
# uses run.sh's helpers and variables (run, kv, calc, mib, fig, fail,
# peak_rss, start_server, stop_server, check_rows, r, tmp, build,
# mcpreel, pids, ready_timeout).  Everything here is report-only: a peer
# that is not installed or does not start is a line "PEER: not run (why)",
# never a failure of the bench; only a mcpreel run that loses rows is.
#
# The functions peer_start/peer_stop/peer_through put a peer in front of
# an upstream for any scenario command; the other scenario scripts call
# peer_through to run through mitmdump or mcp-proxy too.
#
# Scenarios of its own:
#  - MCP over Streamable HTTP in front of a stdio server (bench/mcp_server,
#    which answers the handshake and echoes): `mcpreel record --listen
#    ADDR -- CMD` against the npm mcp-proxy (bench/peers, pinned), each
#    with the same server behind it, driven by bench/mcp_load (initialize,
#    then tools/call echo: mcp-proxy answers ping itself, so ping would
#    not reach the server behind it).
#  - server-everything's Streamable HTTP: `ping` one at a time, direct and
#    through `mcpreel record --listen ADDR --upstream URL` (and mitmdump
#    when installed), the median time to the answer's head and to the
#    whole answer, over several runs alternated.

peers_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mcp_load=$build/bench/mcp_load
mcp_server=$build/bench/mcp_server
mcp_proxy=$peers_dir/peers/node_modules/.bin/mcp-proxy
server_everything=$peers_dir/../tests/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js
loopback_preload=$peers_dir/../tests/e2e/lib/listen_loopback.mjs

# Counts: mcp-proxy answers in about a millisecond, so a few thousand.
peers_latency_n=${BENCH_PEERS_LATENCY_N:-2000}
peers_throughput_n=${BENCH_PEERS_THROUGHPUT_N:-4000}
peers_conns=${BENCH_PEERS_CONNS:-4}
peers_ping_n=${BENCH_PEERS_PING_N:-350}
peers_runs=${BENCH_PEERS_RUNS:-5}
peers_ping_warmup=${BENCH_PEERS_PING_WARMUP:-2000}
# Seconds a load client may run before it gives up on a peer too slow or
# stuck (mcp_load's watchdog); a peer that took them is not tried again.
peers_timeout=${BENCH_PEERS_TIMEOUT:-120}
# The stdio server behind mcpreel --listen and mcp-proxy: ours, or with
# BENCH_PEERS_STDIO=everything server-everything's stdio mode (its own
# cost, about a millisecond a request here, then dominates).
if [ "${BENCH_PEERS_STDIO:-}" = everything ]; then
	peers_stdio=(node "$server_everything" stdio)
	peers_stdio_name="server-everything stdio"
else
	peers_stdio=("$mcp_server")
	peers_stdio_name="bench/mcp_server"
fi

# A port nobody listens on now, from the kernel.
peer_free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait until 127.0.0.1:PORT accepts a connection while PID lives.
peer_wait_port() {
	local port=$1 pid=$2 i
	for ((i = 0; i < ready_timeout * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# Why a peer cannot run here, or nothing when it can: PEER.
peer_missing() {
	case "$1" in
	mcpreel|mcpreel-bridge) [ -x "$mcpreel" ] || echo "no $mcpreel" ;;
	mitmdump) command -v mitmdump >/dev/null 2>&1 ||
	    echo "not installed (Debian package mitmproxy: scripts/deps.sh bench)" ;;
	mcp-proxy)
		if ! command -v node >/dev/null 2>&1; then
			echo "no node on the PATH"
		elif [ ! -x "$mcp_proxy" ]; then
			echo "not installed (scripts/deps.sh bench, or npm ci --prefix bench/peers)"
		fi ;;
	*) echo "unknown peer $1" ;;
	esac
}

# Start PEER as NAME in front of UPSTREAM: an http:// origin for mcpreel
# (the reverse proxy) and mitmdump, a command (the rest of the arguments)
# for mcpreel-bridge and mcp-proxy.  Sets peer_pid, peer_url (its
# origin), peer_db (mcpreel's database, else empty); returns 1 with the
# reason in peer_why when it cannot run or did not start.
peer_start() {
	local peer=$1 name=$2 port
	shift 2
	peer_pid=""; peer_url=""; peer_db=""; peer_why=$(peer_missing "$peer")
	[ -n "$peer_why" ] && return 1
	case "$peer" in
	mcpreel|mcpreel-bridge)
		peer_db="$tmp/$name.db"
		local what=(--upstream "$1")
		[ "$peer" = mcpreel-bridge ] && what=(-- "$@")
		if ! start_server "$name-proxy" "mcpreel: listening on" "$mcpreel" record \
		    --db "$peer_db" --name "bench-$name" --listen 127.0.0.1:0 "${what[@]}"; then
			peer_why="did not start (see $tmp/$name-proxy.err)"
			return 1
		fi
		peer_pid=$spid
		peer_url="http://127.0.0.1:$sport"
		return 0 ;;
	mitmdump)
		port=$(peer_free_port) || { peer_why="no free port"; return 1; }
		# mitm_sse.py streams GET event streams (held whole otherwise).
		mitmdump --mode "reverse:$1" --listen-host 127.0.0.1 --listen-port "$port" \
		    -s "$peers_dir/peers/mitm_sse.py" -w "$tmp/$name.flows" -q \
		    >"$tmp/$name-proxy.out" 2>"$tmp/$name-proxy.err" &
		;;
	mcp-proxy)
		port=$(peer_free_port) || { peer_why="no free port"; return 1; }
		# Its defaults otherwise (an event store, both transports), as a
		# user would run it; --host: it binds every interface by default.
		node "$mcp_proxy" --host 127.0.0.1 --port "$port" -- "$@" \
		    >"$tmp/$name-proxy.out" 2>"$tmp/$name-proxy.err" &
		;;
	esac
	peer_pid=$!
	pids="$pids $peer_pid"
	if ! peer_wait_port "$port" "$peer_pid"; then
		peer_why="did not listen within ${ready_timeout}s: $(tail -n 1 "$tmp/$name-proxy.err")"
		peer_kill "$peer_pid"
		peer_pid=""
		return 1
	fi
	peer_url="http://127.0.0.1:$port"
	return 0
}

# The CPU time PID has used, user and system, in ms (its children not
# included: the stdio server behind a bridge is not counted).  The
# kernel counts it in ticks of 10 ms; this is the figure the machine's
# other load changes least.
peer_cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' \
	    "/proc/$1/stat" 2>/dev/null
}

# Whether PID is still running (a zombie, dead but not waited for, is not).
peer_alive() {
	local state
	state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$state" ] && [ "$state" != Z ]
}

# Stop PID with SIGTERM, and SIGKILL if it still runs after ready_timeout
# seconds (run.sh's stop_server would wait for a peer that ignores
# SIGTERM for ever); then reap it with stop_server.
peer_kill() {
	local p=$1 i
	kill -TERM "$p" 2>/dev/null
	for ((i = 0; i < ready_timeout * 20; i++)); do
		peer_alive "$p" || break
		sleep 0.05
	done
	if peer_alive "$p"; then
		echo "  (pid $p did not stop within ${ready_timeout}s of SIGTERM: killed)"
		kill -KILL "$p" 2>/dev/null
	fi
	stop_server "$p"
}

# Stop the peer started last: its peak RSS (KiB) in peer_rss, its CPU
# time (ms) in peer_cpu.
peer_stop() {
	peer_rss=$(peak_rss "$peer_pid")
	peer_cpu=$(peer_cpu_ms "$peer_pid")
	peer_kill "$peer_pid"
	peer_pid=""
}

# Run a load client against a peer, report only: NAME ARGS...; its line
# in $out, or 1 with the reason in peer_why (no FAIL: a peer's failure is
# not the bench's).
peer_run() {
	local name=$1
	shift
	out=$("$@" 2>"$tmp/$name.err")
	local rc=$?
	if [ $rc != 0 ] || [ -z "$out" ]; then
		peer_why="exited $rc: $(tail -n 1 "$tmp/$name.err")"
		out=""
		return 1
	fi
	return 0
}

# Run a scenario command through PEER: PEER NAME UPSTREAM -- CMD..., each
# word of CMD with @URL@ in it getting the peer's origin there.  The
# command's key=value line lands in r[NAME.PEER], the peer's peak RSS in
# r[NAME.PEER.rss]; a line says what happened.  Returns 1 when the peer
# or the command did not run (the reason in r[NAME.PEER.why]).
peer_through() {
	local peer=$1 name=$2 up=$3 w argv=()
	shift 3
	[ "${1:-}" = -- ] && shift
	if ! peer_start "$peer" "$name-$peer" "$up"; then
		r[$name.$peer.why]=$peer_why
		echo "  $name through $peer: not run ($peer_why)"
		return 1
	fi
	for w in "$@"; do
		argv+=("${w//@URL@/$peer_url}")
	done
	peer_run "$name-$peer" "${argv[@]}"
	local rc=$?
	peer_stop
	r[$name.$peer.rss]=$peer_rss
	r[$name.$peer.cpu]=$peer_cpu
	if [ $rc != 0 ]; then
		r[$name.$peer.why]="the scenario failed: $peer_why"
		echo "  $name through $peer: ${r[$name.$peer.why]}"
		return 1
	fi
	r[$name.$peer]=$out
	echo "  $name through $peer: $out, peak RSS $(mib "$peer_rss")"
	return 0
}

# Drive the stdio server behind PEER (mcpreel-bridge or mcp-proxy):
# latency then throughput, each on a fresh peer.  For mcpreel the rows
# recorded are checked (two per round trip, three for the handshake).
peers_mcp_pair() {
	local peer=$1 sc n
	for sc in latency throughput; do
		n=$peers_latency_n
		[ $sc = throughput ] && n=$peers_throughput_n
		if ! peer_start "$peer" "mcp-$sc-$peer" "${peers_stdio[@]}"; then
			r[mcp-$sc.$peer.why]=$peer_why
			continue
		fi
		# mcpreel failing is the bench's failure; a peer's is reported.
		local runner=peer_run
		[ "$peer" = mcpreel-bridge ] && runner=run
		if $runner "mcp-$sc-$peer" "$mcp_load" --timeout "$peers_timeout" --scenario $sc --method echo --count "$n" \
		    --conns "$peers_conns" "$peer_url/mcp"; then
			r[mcp-$sc.$peer]=$out
		elif [ "$peer" != mcpreel-bridge ]; then
			r[mcp-$sc.$peer.why]="mcp_load failed: $peer_why"
		fi
		peer_stop
		r[mcp-$sc.$peer.rss]=$peer_rss
		r[mcp-$sc.$peer.cpu]=$peer_cpu
		if [ -n "$peer_db" ] && [ -n "${r[mcp-$sc.$peer]:-}" ]; then
			peers_rows "mcp-$sc" "$peer_db" $((2 * $(kv "${r[mcp-$sc.$peer]}" sent) + 3))
			r[mcp-$sc.rows]=$rows
		fi
	done
}

# Check DB holds EXPECTED messages (run.sh's check_rows), or at least
# that many behind server-everything, which sends notifications of its
# own (log messages, resource updates) on a timer.
peers_rows() {
	local name=$1 db=$2 expected=$3 got
	if [ "${BENCH_PEERS_STDIO:-}" != everything ]; then
		check_rows "$@"
		return
	fi
	got=$(count_rows "$db" 2>/dev/null | cut -d' ' -f1)
	if [ -n "$got" ] && [ "$got" -ge "$expected" ]; then
		rows="$got (>= $expected) ok"
	else
		fail "$name: ${got:-?} of at least $expected messages recorded"
		rows="${got:-?} (>= $expected) FAIL"
	fi
}

# The peer's CPU time per request of scenario NAME, in us, or "-".
peers_cpu_per() {
	local line=${r[$1.$2]:-} cpu=${r[$1.$2.cpu]:-}
	[ -z "$line" ] || [ -z "$cpu" ] && { echo "-"; return; }
	calc "%.0f" "$cpu * 1000 / $(kv "$line" sent)"
}

# A cell: the figure, or the reason the peer did not run.
peers_cell() {
	local key=$1 k=$2
	if [ -n "${r[$key]:-}" ]; then
		fig "$key" "$k"
	else
		echo "-"
	fi
}

# The median of numbers, one per argument.
peers_median() {
	[ $# = 0 ] && { echo "-"; return; }
	printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'
}

# --- MCP over HTTP in front of a stdio server ----------------------------

peers_mcp() {
	local peer k
	echo "running MCP over Streamable HTTP in front of a stdio server: mcpreel --listen -- CMD and mcp-proxy ..."
	if [ ! -x "$mcp_load" ] || [ ! -x "$mcp_server" ]; then
		echo "peers: not run ($mcp_load or $mcp_server missing: build first)"
		return
	fi
	for peer in mcpreel-bridge mcp-proxy; do
		peers_mcp_pair "$peer"
	done
	echo
	echo "MCP over Streamable HTTP, a stdio server behind ($peers_stdio_name), tools/call echo of 200 B:"
	printf "%-28s | %15s | %15s | %18s | %16s | %16s | %s\n" "scenario" "mcpreel --listen" \
	    "mcp-proxy" "mcp-proxy/mcpreel" "mcpreel peak RSS" "mcp-proxy RSS" "recorded rows (expected)"
	printf "%-28s | %15s | %15s | %18s | %16s | %16s | %s\n" "----------------------------" \
	    "---------------" "---------------" "------------------" "----------------" \
	    "----------------" "------------------------"
	for k in p50_us p99_us head_p50_us; do
		local a b rest=("" "" "")
		a=$(peers_cell mcp-latency.mcpreel-bridge $k)
		b=$(peers_cell mcp-latency.mcp-proxy $k)
		[ $k = p50_us ] && rest=("$(mib "${r[mcp-latency.mcpreel-bridge.rss]:-}")" \
		    "$(mib "${r[mcp-latency.mcp-proxy.rss]:-}")" "${r[mcp-latency.rows]:--}")
		printf "%-28s | %15s | %15s | %18s | %16s | %16s | %s\n" "latency ${k%_us} (us)" "$a" "$b" \
		    "$( [ "$a" != - ] && [ "$b" != - ] && calc "%.1fx" "$b / $a" || echo -)" "${rest[@]}"
	done
	a=$(peers_cell mcp-throughput.mcpreel-bridge msgs_per_s)
	b=$(peers_cell mcp-throughput.mcp-proxy msgs_per_s)
	printf "%-28s | %15s | %15s | %18s | %16s | %16s | %s\n" "throughput $peers_conns conns (msgs/s)" "$a" "$b" \
	    "$( [ "$a" != - ] && [ "$b" != - ] && calc "%.2fx" "$b / $a" || echo -)" \
	    "$(mib "${r[mcp-throughput.mcpreel-bridge.rss]:-}")" \
	    "$(mib "${r[mcp-throughput.mcp-proxy.rss]:-}")" "${r[mcp-throughput.rows]:--}"
	a=$(peers_cpu_per mcp-latency mcpreel-bridge)/$(peers_cpu_per mcp-throughput mcpreel-bridge)
	b=$(peers_cpu_per mcp-latency mcp-proxy)/$(peers_cpu_per mcp-throughput mcp-proxy)
	printf "%-28s | %15s | %15s | %18s | %16s | %16s | %s\n" "CPU/request lat/tput (us)" "$a" "$b" \
	    "" "" "" ""
	for peer in mcpreel-bridge mcp-proxy; do
		for k in mcp-latency mcp-throughput; do
			[ -n "${r[$k.$peer.why]:-}" ] && echo "$peer: $k not run (${r[$k.$peer.why]})"
		done
	done
	[ -x "$mcp_proxy" ] && echo "mcp-proxy: $(node -p "require('$peers_dir/peers/node_modules/mcp-proxy/package.json').version" 2>/dev/null), defaults, --host 127.0.0.1; $peers_latency_n latency and $peers_throughput_n throughput requests each"
	echo "(no direct column: a stdio server has no HTTP of its own; head: time to the answer's head)"
	echo
}

# --- server-everything ping, direct and through ---------------------------

peers_ping() {
	local i mode order se_pid se_url line k d m x
	local -A heads walls cpus failed
	echo "running server-everything ping ($peers_ping_n one at a time, $peers_runs runs each way, alternated) ..."
	if ! command -v node >/dev/null 2>&1 || [ ! -f "$server_everything" ]; then
		echo "server-everything ping: not run (no node, or no $server_everything: cd tests/e2e && npm ci)"
		echo
		return
	fi
	# It takes its port from $PORT; the preload (the e2e tests') binds
	# 127.0.0.1 and says which port it got.
	PORT=0 node --import "$loopback_preload" "$server_everything" streamableHttp \
	    >"$tmp/server-everything.out" 2>&1 &
	se_pid=$!
	pids="$pids $se_pid"
	sport=""
	for ((i = 0; i < ready_timeout * 20; i++)); do
		[ -n "$sport" ] && break
		kill -0 "$se_pid" 2>/dev/null || break
		sleep 0.05
		sport=$(sed -n 's/^mcpreel-e2e: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
		    "$tmp/server-everything.out")
	done
	if [ -z "$sport" ]; then
		echo "server-everything ping: not run (server-everything did not start:" \
		    "$(tail -n 1 "$tmp/server-everything.out"))"
		peer_kill "$se_pid"
		echo
		return
	fi
	se_url="http://127.0.0.1:$sport"
	# An untimed run first: Node's JIT and heap make the first thousand
	# or so answers several times slower, and the direct run would pay.
	"$mcp_load" --timeout "$peers_timeout" --method ping --count "$peers_ping_warmup" "$se_url/mcp" >/dev/null 2>&1
	# The order turns each run (direct first, then last), so that what
	# comes first (a server still warming up) is not always the same.
	for ((i = 1; i <= peers_runs; i++)); do
		order="direct mcpreel mitmdump"
		((i % 2 == 0)) && order="mcpreel mitmdump direct"
		for mode in $order; do
			# A mode that failed once (a peer missing, dead or too
			# slow for mcp_load's watchdog) is not tried again.
			[ -n "${failed[$mode]:-}" ] && continue
			if [ $mode = direct ]; then
				# server-everything is a peer too: report only.
				if ! peer_run "se-ping-direct-$i" "$mcp_load" --timeout "$peers_timeout" --method ping \
				    --count "$peers_ping_n" "$se_url/mcp"; then
					failed[direct]=1
					r[se-ping.direct.why]=$peer_why
					echo "  se-ping-$i direct: not run ($peer_why)"
					continue
				fi
				heads[direct]+=" $(kv "$out" head_p50_us)"; walls[direct]+=" $(kv "$out" p50_us)"
				continue
			fi
			if peer_through "$mode" "se-ping-$i" "$se_url" -- \
			    "$mcp_load" --timeout "$peers_timeout" --method ping --count "$peers_ping_n" @URL@/mcp >/dev/null; then
				line=${r[se-ping-$i.$mode]}
				heads[$mode]+=" $(kv "$line" head_p50_us)"; walls[$mode]+=" $(kv "$line" p50_us)"
				if [ $mode = mcpreel ]; then
					check_rows "se-ping-$i" "$peer_db" $((2 * $(kv "$line" sent) + 3))
					r[se-ping.rows]=$rows
				fi
				r[se-ping.$mode.rss]=${r[se-ping-$i.$mode.rss]}
				cpus[$mode]+=" $(peers_cpu_per "se-ping-$i" "$mode")"
			else
				failed[$mode]=1
				r[se-ping.$mode.why]=${r[se-ping-$i.$mode.why]}
			fi
		done
	done
	peer_kill "$se_pid"
	echo
	echo "server-everything ping (direct vs through): Streamable HTTP, SSE answers, medians of each run's p50 over $peers_runs runs"
	printf "%-28s | %12s | %15s | %15s | %18s | %s\n" "scenario" "direct" "through mcpreel" \
	    "added" "mitmdump" "runs (direct; mcpreel; mitmdump)"
	printf "%-28s | %12s | %15s | %15s | %18s | %s\n" "----------------------------" "------------" \
	    "---------------" "---------------" "------------------" "--------------------------------"
	for k in head whole; do
		local -A v=()
		if [ $k = head ]; then
			for mode in direct mcpreel mitmdump; do v[$mode]=${heads[$mode]:-}; done
		else
			for mode in direct mcpreel mitmdump; do v[$mode]=${walls[$mode]:-}; done
		fi
		d=$(peers_median ${v[direct]}); m=$(peers_median ${v[mcpreel]}); x=$(peers_median ${v[mitmdump]})
		printf "%-28s | %12s | %15s | %15s | %18s | %s\n" "ping to $k p50 (us)" "$d" "$m" \
		    "$(added "$d" "$m" us)" "$x ($(added "$d" "$x" us))" \
		    "${v[direct]} ;${v[mcpreel]} ;${v[mitmdump]}"
	done
	printf "%-28s | %12s | %15s | %15s | %18s | %s\n" "proxy CPU per ping (us)" "" \
	    "$(peers_median ${cpus[mcpreel]:-})" "" "$(peers_median ${cpus[mitmdump]:-})" \
	    "${cpus[mcpreel]:-} ;${cpus[mitmdump]:-}"
	for mode in direct mcpreel; do
		[ -n "${r[se-ping.$mode.why]:-}" ] && echo "$mode: not run (${r[se-ping.$mode.why]})"
	done
	echo "mcpreel peak RSS $(mib "${r[se-ping.mcpreel.rss]:-}"), rows ${r[se-ping.rows]:--};" \
	    "mitmdump $( [ -n "${r[se-ping.mitmdump.why]:-}" ] && echo "not run (${r[se-ping.mitmdump.why]})" ||
	    echo "peak RSS $(mib "${r[se-ping.mitmdump.rss]:-}")")"
	echo
}

peers_mcp
peers_ping
