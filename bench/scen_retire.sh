# The short-sessions scenario, sourced by bench/run.sh (it uses run.sh's
# helpers: start_server, stop_server, run, fail, kv, calc, mib, peak_rss,
# verdict, and its $tmp, $build, $mcpreel).
#
# BENCH_RETIRE_N MCP sessions over Streamable HTTP one after another
# (bench/churn.mjs: initialize, ping, DELETE) against bench/sess_echo:
# direct, then through `mcpreel record` with the default --max-sessions,
# then with --max-sessions BENCH_RETIRE_MAX, in the same run.  With more
# sessions than the bound, an ended session must be let go: every session
# a row of its own (BENCH_RETIRE_N rows, 4 messages each), none in the
# run's default session, and peak RSS bounded by the sessions held.

retire_n=${BENCH_RETIRE_N:-20000}
retire_max=${BENCH_RETIRE_MAX:-1000}

# One run through mcpreel: NAME EXTRA-ARGS; its line in retire_r[NAME].
retire_through() {
	local name=$1 extra=$2 db=$tmp/retire-$1.db mpid port rss rows most
	retire_r[$name]=""
	if ! start_server "retire-$name" "listening on" "$mcpreel" record \
	    --db "$db" --listen 127.0.0.1:0 --upstream "$retire_up" $extra; then
		return
	fi
	mpid=$spid
	port=$sport
	run "retire-$name" node "$(dirname "$0")/churn.mjs" \
	    "http://127.0.0.1:$port/mcp" "$retire_n" || { stop_server "$mpid"; return; }
	rss=$(peak_rss "$mpid")
	stop_server "$mpid" || fail "retire-$name: mcpreel did not exit 0"
	rows=$(sqlite3 "$db" "SELECT count(*) FROM sessions")
	most=$(sqlite3 "$db" "SELECT coalesce(max(n), 0) FROM (SELECT count(*) n
	    FROM messages GROUP BY session_id)")
	retire_r[$name]="$out rss=$rss rows=$rows most=$most"
}

declare -A retire_r
echo "short sessions: $retire_n MCP sessions one after another (initialize, ping, DELETE)"
if ! command -v node >/dev/null 2>&1 || ! command -v sqlite3 >/dev/null 2>&1; then
	echo "short sessions: not measured (needs node and the sqlite3 shell)"
elif start_server retire-echo "sess_echo: listening on" "$build/bench/sess_echo"; then
	retire_echo=$spid
	retire_up=http://127.0.0.1:$sport
	run retire-direct node "$(dirname "$0")/churn.mjs" "$retire_up/mcp" "$retire_n" &&
	    retire_r[direct]=$out
	retire_through default ""
	retire_through bounded "--max-sessions $retire_max"
	stop_server "$retire_echo"
fi

# A figure of a run, or "-".
retire_fig() {
	local v
	[ -z "${retire_r[$1]:-}" ] && { echo "-"; return; }
	v=$(kv "${retire_r[$1]}" "$2")
	echo "${v:--}"
}

printf "%-34s | %12s | %15s | %12s | %10s | %24s\n" "" "direct" "through mcpreel" \
    "ratio" "peak RSS" "session rows (expected)"
for name in default bounded; do
	d=$(retire_fig direct per_s)
	m=$(retire_fig $name per_s)
	ratio=-
	[ "$d" != - ] && [ "$m" != - ] && ratio=$(calc "%.2f" "$m / $d")
	label="sessions/s, --max-sessions 16384"
	[ $name = bounded ] && label="sessions/s, --max-sessions $retire_max"
	printf "%-34s | %12s | %15s | %12s | %10s | %24s\n" "$label" "$d" "$m" \
	    "$ratio" "$(mib "$(retire_fig $name rss | sed 's/^-$//')")" \
	    "$(retire_fig $name rows) ($retire_n)"
done
echo "targets:"
for name in default bounded; do
	rows=$(retire_fig $name rows)
	most=$(retire_fig $name most)
	if [ "$rows" = - ]; then
		printf "  %-50s %-36s %s\n" "$name: every session its own row" "-" "not measured (a run failed)"
		continue
	fi
	printf "  %-50s %-36s %s\n" "$name: every session its own row" \
	    "$rows rows, at most $most messages in one" \
	    "$(verdict "$rows == $retire_n && $most == 4")"
	[ "$rows" = "$retire_n" ] && [ "$most" = 4 ] ||
	    fail "retire-$name: $rows session rows of $retire_n, $most messages in the fullest"
done
rss=$(retire_fig bounded rss)
printf "  %-50s %-36s %s\n" "--max-sessions $retire_max: peak RSS <= 32 MiB" \
    "$(mib "${rss/-/}")" "$([ "$rss" = - ] && echo "not measured" || verdict "$rss <= 32768")"
echo
