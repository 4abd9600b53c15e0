# The HTTP recorder as a gateway: throughput with 4 and 64 client
# connections, and latency one request at a time with the answer framed as
# real servers frame it (JSON, chunked JSON, an SSE stream, head and body in
# separate writes).  Sourced by run.sh, whose helpers (run, start_server,
# stop_server, check_rows, peak_rss, kv, calc, mib, verdict, fail) and
# variables ($http_echo, $http_load, $mcpreel, $tmp) it uses.  Each figure
# is the median of BENCH_HTTP_ROUNDS rounds, each round direct then through
# mcpreel, back to back, so that a busy machine weighs on both alike.
#
# The throughput scenario also says where the CPU goes: the CPU time of
# the load client (its own cpu_s), of the echo server and of mcpreel's two
# threads (the event loop, and the SQLite writer named mcpreel-writer),
# read from /proc before and after each run, per exchange: the echo's
# from /proc/PID/stat (utime+stime, which keep the time of its threads
# that have ended, one per connection), mcpreel's threads from
# /proc/PID/task/TID/schedstat (nanoseconds, where stat counts ticks);
# the ceiling that implies on this machine's CPUs; and the writer's cost
# beside bench/sqlite_floor's per row, with the rows an exchange adds
# counted in the database after the run.

hs_rounds=${BENCH_HTTP_ROUNDS:-3}
hs_tput_n=${BENCH_HTTP_GW_N:-40000}
hs_lat_n=${BENCH_HTTP_GW_LATENCY_N:-3000}
hs_conns=${BENCH_HTTP_GW_CONNS:-"4 64"}
hs_modes=${BENCH_HTTP_GW_MODES:-"json chunked sse sse-split json-split"}
hs_floor_n=${BENCH_HTTP_FLOOR_N:-$hs_tput_n}
hs_floor_bin=$build/bench/sqlite_floor
hs_ncpu=$(nproc)
hs_clk_tck=$(getconf CLK_TCK)
hs_relay=${BENCH_HTTP_RELAY:-1}
hs_relay_bin=$build/bench/tcp_relay

# The median of the numbers given.
hs_median() {
	printf "%s\n" "$@" | sort -g | awk '{ v[NR] = $1 }
	    END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
	    else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# One table line, in run.sh's columns.
hs_line() {
	printf "%-28s | %12s | %15s | %18s | %18s | %26s\n" "$@"
}

# The CPU time PID has used so far, in ns: "the process's (utime+stime,
# ended threads too), its thread named mcpreel-writer's, its first
# thread's", a thread's from its schedstat, or from its stat's ticks where
# the kernel keeps no schedstat; "-" for a thread it does not have (or a
# process that is gone), so that a figure never reads as 0 us.
hs_cpu() {
	local t ns st all=- w=- main=-
	if read -r st 2>/dev/null <"/proc/$1/stat"; then
		read -r -a st <<<"${st##*) }"
		all=$(((st[11] + st[12]) * 1000000000 / hs_clk_tck))
	fi
	for t in /proc/$1/task/*; do
		if ! { read -r ns _ <"$t/schedstat"; } 2>/dev/null; then
			read -r st 2>/dev/null <"$t/stat" || continue
			read -r -a st <<<"${st##*) }"
			ns=$(((st[11] + st[12]) * 1000000000 / hs_clk_tck))
		fi
		[ "${t##*/}" = "$1" ] && main=$ns
		[ "$(cat "$t/comm" 2>/dev/null)" = mcpreel-writer ] && w=$ns
	done
	echo "$all $w $main"
}

# Microseconds per exchange of the ns between two hs_cpu figures: BEFORE
# AFTER EXCHANGES [FIELD: 1 the process, 2 the writer, 3 the first
# thread]; nothing (and 1) when either figure is "-".
hs_cpu_us() {
	local b a f=$((${4:-1} - 1))
	read -r -a b <<<"$1"
	read -r -a a <<<"$2"
	[ "${b[f]:--}" = - ] || [ "${a[f]:--}" = - ] && return 1
	calc "%.2f" "(${a[f]} - ${b[f]}) / 1000 / $3"
}

# Append to array NAME the figures given that are not empty.
hs_push() {
	local -n hs_arr=$1
	local v
	shift
	for v in "$@"; do
		[ -n "$v" ] && hs_arr+=("$v")
	done
}

# The rows DB holds in the tables a recording writes, all summed.
hs_db_rows() {
	command -v sqlite3 >/dev/null 2>&1 || return 1
	sqlite3 "$1" "SELECT (SELECT count(*) FROM messages) +
	    (SELECT count(*) FROM http_exchanges) + (SELECT count(*) FROM events) +
	    (SELECT count(*) FROM sessions)" 2>/dev/null
}

# Start an echo server in MODE (json, chunked, sse, with -split); its port
# in $hs_eport and pid in $hs_epid.
hs_echo() {
	local mode=$1 args
	args=(--answer "${mode%-split}")
	[ "${mode%-split}" != "$mode" ] && args+=(--split)
	start_server "gw-echo-$mode" "http_echo: listening on" "$http_echo" \
	    "${args[@]}" || return 1
	hs_eport=$sport hs_epid=$spid
}

# Start mcpreel in front of port $hs_eport with database DB: NAME DB; its
# port in $hs_mport and pid in $hs_mpid.
hs_proxy() {
	start_server "$1-proxy" "mcpreel: listening on" "$mcpreel" record \
	    --db "$2" --name "bench-$1" --listen 127.0.0.1:0 \
	    --upstream "http://127.0.0.1:$hs_eport" || return 1
	hs_mport=$sport hs_mpid=$spid
}

# Stop mcpreel, then check its database holds EXPECTED messages: NAME DB
# EXPECTED; the rows cell in $rows, the peak RSS in $hs_rss.
hs_proxy_end() {
	hs_rss=$(peak_rss "$hs_mpid")
	if ! stop_server "$hs_mpid"; then
		fail "$1: mcpreel did not exit 0 on SIGTERM"
		sed 's/^/    /' "$tmp/$1-proxy.err" | tail -n 5
	fi
	check_rows "$1" "$2" "$3"
}

echo "running HTTP gateway: throughput at ${hs_conns// /, } connections, latency per answer framing," \
    "$hs_rounds rounds each ..."
declare -A hs
for c in $hs_conns; do
	name=gw-tput-$c db="$tmp/gw-tput-$c.db"
	hs_echo json || continue
	if ! hs_proxy "$name" "$db"; then
		stop_server "$hs_epid"
		continue
	fi
	hs_rpid=""
	if [ "$hs_relay" = 1 ] && [ -x "$hs_relay_bin" ] && start_server "$name-relay" "tcp_relay: listening on" \
	    "$hs_relay_bin" --upstream "$hs_eport"; then
		hs_rport=$sport hs_rpid=$spid
	fi
	d=() m=() ratio=() sent=0 cld=() ced=() clm=() cem=() cml=() cmw=()
	rl=() rratio=() clr=() cer=() crr=()
	for ((i = 0; i < hs_rounds; i++)); do
		e0=$(hs_cpu "$hs_epid")
		run "$name-direct" "$http_load" --scenario throughput --count "$hs_tput_n" \
		    --conns "$c" "http://127.0.0.1:$hs_eport/mcp" || continue
		e1=$(hs_cpu "$hs_epid")
		dl=$out dx=$(kv "$out" received)
		if [ -n "$hs_rpid" ]; then
			r0=$(hs_cpu "$hs_rpid")
			if run "$name-relay" "$http_load" --scenario throughput --count "$hs_tput_n" \
			    --conns "$c" "http://127.0.0.1:$hs_rport/mcp"; then
				r1=$(hs_cpu "$hs_rpid") e2=$(hs_cpu "$hs_epid") rx=$(kv "$out" received)
				rl+=("$(kv "$out" msgs_per_s)")
				rratio+=("$(calc "%.1f" "100 * $(kv "$out" msgs_per_s) / $(kv "$dl" msgs_per_s)")")
				clr+=("$(calc "%.2f" "$(kv "$out" cpu_s) * 1e6 / $rx")")
				# The relay is one thread: its schedstat, in ns.
				hs_push cer "$(hs_cpu_us "$e1" "$e2" "$rx")"
				hs_push crr "$(hs_cpu_us "$r0" "$r1" "$rx" 3)"
			fi
			e1=$(hs_cpu "$hs_epid")
		fi
		m0=$(hs_cpu "$hs_mpid")
		run "$name-mcpreel" "$http_load" --scenario throughput --count "$hs_tput_n" \
		    --conns "$c" "http://127.0.0.1:$hs_mport/mcp" || continue
		# The writer's last rows wait for its tick: let it write them.
		sleep 0.2
		e2=$(hs_cpu "$hs_epid") m1=$(hs_cpu "$hs_mpid")
		mx=$(kv "$out" received)
		dv=$(kv "$dl" msgs_per_s) mv=$(kv "$out" msgs_per_s)
		sent=$((sent + mx))
		d+=("$dv") m+=("$mv") ratio+=("$(calc "%.1f" "100 * $mv / $dv")")
		cld+=("$(calc "%.2f" "$(kv "$dl" cpu_s) * 1e6 / $dx")")
		clm+=("$(calc "%.2f" "$(kv "$out" cpu_s) * 1e6 / $mx")")
		hs_push ced "$(hs_cpu_us "$e0" "$e1" "$dx")"
		hs_push cem "$(hs_cpu_us "$e1" "$e2" "$mx")"
		hs_push cml "$(hs_cpu_us "$m0" "$m1" "$mx" 3)"
		hs_push cmw "$(hs_cpu_us "$m0" "$m1" "$mx" 2)"
	done
	hs_proxy_end "$name" "$db" $((2 * sent))
	[ -n "$hs_rpid" ] && stop_server "$hs_rpid"
	stop_server "$hs_epid"
	hs[$c.r]=$(hs_median "${rl[@]}") hs[$c.rratio]=$(hs_median "${rratio[@]}")
	hs[$c.clr]=$(hs_median "${clr[@]}") hs[$c.cer]=$(hs_median "${cer[@]}")
	hs[$c.crr]=$(hs_median "${crr[@]}")
	hs[$c.d]=$(hs_median "${d[@]}") hs[$c.m]=$(hs_median "${m[@]}")
	hs[$c.ratio]=$(hs_median "${ratio[@]}") hs[$c.rss]=$hs_rss hs[$c.rows]=$rows
	hs[$c.runs]="${ratio[*]}"
	hs[$c.cld]=$(hs_median "${cld[@]}") hs[$c.ced]=$(hs_median "${ced[@]}")
	hs[$c.clm]=$(hs_median "${clm[@]}") hs[$c.cem]=$(hs_median "${cem[@]}")
	hs[$c.cml]=$(hs_median "${cml[@]}") hs[$c.cmw]=$(hs_median "${cmw[@]}")
	hs[$c.dbrows]=$(hs_db_rows "$db") hs[$c.x]=$sent
done
# SQLite's own cost per row with mcpreel's schema and writer settings.
if [ -x "$hs_floor_bin" ] && run gw-floor "$hs_floor_bin" --count "$hs_floor_n" "$tmp/gw-floor.db"; then
	hs[floor_us]=$(calc "%.2f" "1e6 / $(kv "$out" rows_per_cpu_s)")
fi
rm -f "$tmp/gw-floor.db"*
for mode in $hs_modes; do
	name=gw-lat-$mode db="$tmp/gw-lat-$mode.db"
	hs_echo "$mode" || continue
	if ! hs_proxy "$name" "$db"; then
		stop_server "$hs_epid"
		continue
	fi
	p50d=() p50m=() p99d=() p99m=() a99=() sent=0
	for ((i = 0; i < hs_rounds; i++)); do
		run "$name-direct" "$http_load" --scenario latency --count "$hs_lat_n" \
		    "http://127.0.0.1:$hs_eport/mcp" || continue
		dl=$out
		run "$name-mcpreel" "$http_load" --scenario latency --count "$hs_lat_n" \
		    "http://127.0.0.1:$hs_mport/mcp" || continue
		sent=$((sent + $(kv "$out" sent)))
		p50d+=("$(kv "$dl" p50_us)") p99d+=("$(kv "$dl" p99_us)")
		p50m+=("$(kv "$out" p50_us)") p99m+=("$(kv "$out" p99_us)")
		a99+=("$(calc "%.1f" "$(kv "$out" p99_us) - $(kv "$dl" p99_us)")")
	done
	hs_proxy_end "$name" "$db" $((2 * sent))
	stop_server "$hs_epid"
	hs[$mode.p50d]=$(hs_median "${p50d[@]}") hs[$mode.p50m]=$(hs_median "${p50m[@]}")
	hs[$mode.p99d]=$(hs_median "${p99d[@]}") hs[$mode.p99m]=$(hs_median "${p99m[@]}")
	hs[$mode.a99]=$(hs_median "${a99[@]}") hs[$mode.rss]=$hs_rss hs[$mode.rows]=$rows
done
echo

echo "HTTP gateway (median of $hs_rounds rounds, each direct then through mcpreel;" \
    "throughput: $hs_tput_n POSTs a round, latency: $hs_lat_n one at a time):"
hs_line "scenario" "direct" "through mcpreel" "added / ratio" "mcpreel peak RSS" \
    "recorded rows (expected)"
hs_line "----------------------------" "------------" "---------------" \
    "------------------" "------------------" "--------------------------"
for c in $hs_conns; do
	hs_line "throughput $c conns (msgs/s)" "${hs[$c.d]:--}" "${hs[$c.m]:--}" \
	    "${hs[$c.ratio]:--}% of direct" "$(mib "${hs[$c.rss]:-}")" "${hs[$c.rows]:--}"
	[ "${hs[$c.r]:--}" != - ] && hs_line "  via tcp_relay (bare hop)" "${hs[$c.d]:--}" \
	    "${hs[$c.r]}" "${hs[$c.rratio]}% of direct" "" "(relays only)"
done
for mode in $hs_modes; do
	hs_line "latency $mode p50 (us)" "${hs[$mode.p50d]:--}" "${hs[$mode.p50m]:--}" \
	    "$(added "${hs[$mode.p50d]:--}" "${hs[$mode.p50m]:--}" us)" \
	    "$(mib "${hs[$mode.rss]:-}")" "${hs[$mode.rows]:--}"
	hs_line "latency $mode p99 (us)" "${hs[$mode.p99d]:--}" "${hs[$mode.p99m]:--}" \
	    "${hs[$mode.a99]:--} us (median)" "" ""
done
echo "(ratios per round: $(for c in $hs_conns; do printf "%s conns: %s; " "$c" "${hs[$c.runs]:--}"; done))"
echo "(json: Content-Length; chunked: one chunk; sse: text/event-stream, one event, chunked;"
echo " -split: head, body and last chunk in separate writes, as a Node server sends them)"
echo

# The CPU budget of one throughput scenario: C (connections).
hs_budget() {
	local c=$1 tot dtot rtot ceil dceil budget rpx sq k
	[ "${hs[$c.d]:--}" != - ] || return
	for k in cld ced clm cem cml cmw; do
		if [ "${hs[$c.$k]:--}" = - ]; then
			echo "  $c conns: CPU per exchange not measured (no /proc figure for $k:" \
			    "a thread or process not found)"
			return
		fi
	done
	tot=$(calc "%.2f" "${hs[$c.clm]} + ${hs[$c.cem]} + ${hs[$c.cml]} + ${hs[$c.cmw]}")
	dtot=$(calc "%.2f" "${hs[$c.cld]} + ${hs[$c.ced]}")
	# Exchanges/s on all CPUs busy, as a share of the direct run's.
	ceil=$(calc "%.1f" "100 * $hs_ncpu * 1e6 / $tot / (${hs[$c.d]} / 2)")
	dceil=$(calc "%.1f" "100 * $hs_ncpu * 1e6 / $dtot / (${hs[$c.d]} / 2)")
	echo "  $c conns, CPU per exchange (median of $hs_rounds): direct: load ${hs[$c.cld]} us," \
	    "echo ${hs[$c.ced]} us = $dtot us; through: load ${hs[$c.clm]} us, echo ${hs[$c.cem]} us," \
	    "mcpreel loop ${hs[$c.cml]} us, writer ${hs[$c.cmw]} us = $tot us"
	echo "    on $hs_ncpu CPUs the ceiling through mcpreel is $ceil% of direct" \
	    "(direct's own ceiling: $dceil% of what it ran); both CPU-bound, through" \
	    "would be $(calc "%.1f" "100 * $dtot / $tot")% of direct (its CPU per exchange over through's)"
	if [ "${hs[$c.crr]:--}" != - ] && [ "${hs[$c.cer]:--}" != - ]; then
		rtot=$(calc "%.2f" "${hs[$c.clr]} + ${hs[$c.cer]} + ${hs[$c.crr]}")
		echo "    via tcp_relay (the hop alone: no parsing, no recording): load ${hs[$c.clr]} us," \
		    "echo ${hs[$c.cer]} us, relay ${hs[$c.crr]} us = $rtot us; its ceiling" \
		    "$(calc "%.1f" "100 * $hs_ncpu * 1e6 / $rtot / (${hs[$c.d]} / 2)")% of direct," \
		    "both CPU-bound $(calc "%.1f" "100 * $dtot / $rtot")%"
	fi
	hs[$c.cpuline]="CPU per exchange: load ${hs[$c.clm]} us, echo ${hs[$c.cem]} us, mcpreel loop"
	hs[$c.cpuline]+=" ${hs[$c.cml]} us, writer ${hs[$c.cmw]} us; on $hs_ncpu CPUs the ceiling is $ceil% of direct"
	hs[$c.cpuline]+=" ($(calc "%.1f" "100 * $dtot / $tot")% when both are CPU-bound)"
	[ -n "${hs[$c.dbrows]:-}" ] && [ -n "${hs[floor_us]:-}" ] || return
	rpx=$(calc "%.2f" "${hs[$c.dbrows]} / ${hs[$c.x]}")
	sq=$(calc "%.2f" "$rpx * ${hs[floor_us]}")
	# At 50% of direct, both CPU-bound, an exchange through may cost twice
	# direct's CPU: what is left after the load client's and the echo's.
	budget=$(calc "%.2f" "2 * $dtot - ${hs[$c.clm]} - ${hs[$c.cem]}")
	echo "    writer: $rpx rows per exchange (${hs[$c.dbrows]} rows in the database for" \
	    "${hs[$c.x]} exchanges) x ${hs[floor_us]} us a row (sqlite_floor) = $sq us of SQLite alone," \
	    "$(calc "%.0f" "100 * $sq / ${hs[$c.cmw]}")% of the writer's ${hs[$c.cmw]} us"
	if awk "BEGIN { exit !($budget > 0) }"; then
		echo "    50% of direct (both CPU-bound: twice direct's $dtot us) leaves mcpreel $budget us" \
		    "of CPU an exchange after the load's and echo's; it spends $(calc "%.2f" "${hs[$c.cml]} + ${hs[$c.cmw]}") us," \
		    "SQLite alone $(calc "%.0f" "100 * $sq / $budget")% of the budget"
	else
		echo "    50% of direct (both CPU-bound) leaves mcpreel nothing: the load client" \
		    "and the echo through it already spend twice direct's $dtot us"
	fi
}

echo "CPU budget of the throughput scenarios (CPU time from /proc, per exchange;" \
    "ceiling = $hs_ncpu CPUs / the CPU all parts spend on one exchange):"
for c in $hs_conns; do
	hs_budget "$c"
done
echo

echo "targets (HTTP gateway):"
for c in $hs_conns; do
	# Met only with every message recorded: a rate that lost rows is none.
	hs_ok=0 hs_fig="${hs[$c.ratio]:--}% of direct"
	case ${hs[$c.rows]:-} in
	*" ok") hs_ok=1 ;;
	*) hs_fig+=", rows FAIL (table)" ;;
	esac
	report "HTTP throughput >= 50% of direct ($c conns)" "$hs_fig" \
	    "${hs[$c.ratio]:--} >= 50 && $hs_ok" "${hs[$c.ratio]:--}"
	[ -n "${hs[$c.cpuline]:-}" ] && echo "    ${hs[$c.cpuline]}"
done
report "HTTP added p99 <= 100 us (one at a time)" "${hs[json.a99]:--} us (json)" \
    "${hs[json.a99]:--} <= 100" "${hs[json.a99]:--}"
echo
