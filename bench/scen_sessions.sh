# The many-sessions scenario, sourced by bench/run.sh (it uses run.sh's
# helpers: start_server, stop_server, run, fail, kv, calc, fig, added,
# report, check_rows, peak_rss, mib, and its r[] and $tmp).
#
# BENCH_SESSIONS_N MCP sessions over Streamable HTTP (bench/sess_load
# against bench/sess_echo), each with an open GET/SSE stream on its own
# connection, POSTs on a pool of BENCH_SESSIONS_POST_CONNS keep-alive
# connections: opened, then BENCH_SESSIONS_SECONDS of one
# request a second each (every request also pushes an event on its
# session's stream), then BENCH_SESSIONS_ACTIVE of them closed loop for
# BENCH_SESSIONS_ACTIVE_SECONDS.  Direct and through a fresh `mcpreel
# record`, in the same run; memory per idle session is the measured
# process's (RSS with N sessions open - RSS with 1) / (N - 1).
#
# A peer proxy: define sessions_peer_NAME (start the peer in front of
# $sessions_upstream, call sessions_through NAME URL PID with the URL it
# listens on and its process for the memory figures, stop it) and list
# NAME in sessions_peers before this file is sourced: it runs after
# mcpreel against the same server and gets a column in the table.

sess_n=${BENCH_SESSIONS_N:-10000}
sess_seconds=${BENCH_SESSIONS_SECONDS:-5}
sess_active=${BENCH_SESSIONS_ACTIVE:-1000}
sess_active_seconds=${BENCH_SESSIONS_ACTIVE_SECONDS:-3}
# POST connections the sessions share (sess_load --post-conns).
sess_post=${BENCH_SESSIONS_POST_CONNS:-256}
# Descriptors mcpreel needs: a GET stream a session and the POST pool,
# each with its upstream twin, and room for its database, pipes and
# listener.  What the hard RLIMIT_NOFILE (which only a process with
# CAP_SYS_RESOURCE may raise) cannot hold is not run: the count is cut
# down and the target says so.
sess_fd_room=256
sess_hard=$(ulimit -Hn)
sess_want=$sess_n
if [ "$sess_hard" != unlimited ] &&
    [ $((2 * sess_n + 2 * sess_post + sess_fd_room)) -gt "$sess_hard" ]; then
	sess_n=$(((sess_hard - 2 * sess_post - sess_fd_room) / 2))
	echo "sessions: the hard limit on open files is $sess_hard: $sess_want sessions" \
	    "need $((2 * sess_want + 2 * sess_post + sess_fd_room)) in mcpreel; running $sess_n"
fi
sess_nofile=$((2 * sess_n + 2 * sess_post + sess_fd_room))
sessions_peers=${sessions_peers:-}
sessions_upstream=""

# Run the load against URL, measuring PID; its line in r[sessions.NAME].
sessions_through() {
	local name=$1 url=$2 pid=$3
	if run "sessions-$name" "$build/bench/sess_load" --sessions "$sess_n" \
	    --seconds "$sess_seconds" --active "$sess_active" \
	    --active-seconds "$sess_active_seconds" --post-conns "$sess_post" \
	    --rss-pid "$pid" "$url"; then
		r[sessions.$name]=$out
	fi
	r[sessions.$name.rss]=$(peak_rss "$pid")
}

# Through a fresh mcpreel record in front of the server.
sessions_mcpreel() {
	local db="$tmp/sessions.db" mpid
	if ! start_server sessions-proxy "mcpreel: listening on" \
	    bash -c 'ulimit -n "$0" && exec "$@"' "$sess_nofile" "$mcpreel" \
	    record --db "$db" --name bench-sessions --listen 127.0.0.1:0 \
	    --max-connections $((sess_n + sess_post + 64)) --upstream "$sessions_upstream"; then
		r[sessions.rows]="- FAIL"
		return
	fi
	mpid=$spid
	sessions_through mcpreel "http://127.0.0.1:$sport/mcp" "$mpid"
	if ! stop_server "$mpid"; then
		fail "sessions: mcpreel did not exit 0 on SIGTERM"
		sed 's/^/    /' "$tmp/sessions-proxy.err" | tail -n 5
	fi
	if [ -n "${r[sessions.mcpreel]:-}" ]; then
		check_rows sessions "$db" "$(kv "${r[sessions.mcpreel]}" messages)"
		r[sessions.rows]=$rows
	else
		r[sessions.rows]="- FAIL"
	fi
}

echo
echo "running $sess_n concurrent sessions (a GET stream each, POSTs on $sess_post connections," \
    "${sess_seconds}s at 1 request/s each, then $sess_active closed loop for" \
    "${sess_active_seconds}s) ..."
if start_server sessions-echo "sess_echo: listening on" "$build/bench/sess_echo"; then
	sess_echo_pid=$spid
	sessions_upstream="http://127.0.0.1:$sport"
	sessions_through direct "$sessions_upstream/mcp" "$sess_echo_pid"
	sessions_mcpreel
	for peer in $sessions_peers; do
		"sessions_peer_$peer"
	done
	stop_server "$sess_echo_pid"
fi

# A table line, with a column for each peer that ran.
sessions_line() {
	local p
	printf "%-30s | %12s | %15s | %18s | %14s | %26s" "$@"
	for p in $sessions_peers; do
		printf " | %16s" "$(fig "sessions.$p" "$sess_key")"
	done
	printf "\n"
}

# A figure direct and through mcpreel: LABEL KEY HOW (us: added, x: ratio).
sessions_row() {
	local d m how=$3 rss=${4:-} rows=${5:-}
	sess_key=$2
	d=$(fig sessions.direct "$2"); m=$(fig sessions.mcpreel "$2")
	case $how in
	us) sessions_line "$1" "$d" "$m" "$(added "$d" "$m" us)" "$rss" "$rows" ;;
	x) sessions_line "$1" "$d" "$m" "$( [ "$d" = - ] || [ "$m" = - ] ||
	    [ "$d" = 0 ] && echo - || calc "%.1fx" "$m / $d")" "$rss" "$rows" ;;
	*) sessions_line "$1" "$d" "$m" "" "$rss" "$rows" ;;
	esac
}

echo
echo "many sessions: $sess_n sessions, each with a GET/SSE stream, POSTs on $sess_post shared keep-alive connections"
sess_key=""
sessions_line "scenario" "direct" "through mcpreel" "added / ratio" "mcpreel peak RSS" \
    "recorded rows (expected)" $sessions_peers
sessions_line "------------------------------" "------------" "---------------" \
    "------------------" "--------------" "--------------------------"
sessions_row "sessions open" ready n "$(mib "${r[sessions.mcpreel.rss]:-}")" \
    "${r[sessions.rows]:--}"
sessions_row "requests answered" total_requests n
sessions_row "events on GET streams" events n
sessions_row "errors" errors n
sessions_row "1 req/s each: p50 (us)" p50_us us
sessions_row "1 req/s each: p99 (us)" p99_us us
sessions_row "$sess_active active: p50 (us)" active_p50_us us
sessions_row "$sess_active active: p99 (us)" active_p99_us us
sessions_row "$sess_active active: req/s" active_rps x
sessions_row "memory per idle session (B)" per_session_b x
sessions_row "RSS, 1 session open (KiB)" rss1_kb n
sessions_row "RSS, all open (KiB)" rssn_kb n
sessions_row "CPU per request (us)" cpu_us_per_req x
echo "(direct: the server's own figures; memory per idle session is (RSS with all open - RSS with one) / (N - 1);"
echo " CPU per request: the measured process's user + system time over both phases / answers)"
echo

sess_m=${r[sessions.mcpreel]:-}
sess_ready=$(fig sessions.mcpreel ready); sess_err=$(fig sessions.mcpreel errors)
sess_ans=$(fig sessions.mcpreel answers); sess_ev=$(fig sessions.mcpreel events)
sess_mem=$(fig sessions.mcpreel per_session_b)
echo "targets (many sessions):"
report "$sess_want sessions served, nothing lost" \
    "$sess_ready open, $sess_ev/$sess_ans events, rows ${r[sessions.rows]:--}" \
    "$sess_ready == $sess_want && $sess_err == 0 && $sess_ev == $sess_ans && \
    $( [[ ${r[sessions.rows]:-} == *ok ]] && echo 1 || echo 0)" \
    "$sess_ready" "$sess_err" "$sess_ans" "$sess_ev"
report "memory per idle stream <= 16 KiB" "$(calc "%.1f KiB" "${sess_mem/-/0} / 1024") a session" \
    "$sess_mem <= 16384" "$sess_mem"
printf "  %-50s %-36s %s\n" "$sess_active active: added p50 / p99" \
    "$(added "$(fig sessions.direct active_p50_us)" "$(fig sessions.mcpreel active_p50_us)" us) / $(added \
    "$(fig sessions.direct active_p99_us)" "$(fig sessions.mcpreel active_p99_us)" us)" "printed"
echo
