# The HTTP recorder as a gateway: throughput with 4 and 64 client
# connections, and latency one request at a time with the answer framed as
# real servers frame it (JSON, chunked JSON, an SSE stream, head and body in
# separate writes).  Sourced by run.sh, whose helpers (run, start_server,
# stop_server, check_rows, peak_rss, kv, calc, mib, verdict, fail) and
# variables ($http_echo, $http_load, $mcpreel, $tmp) it uses.  Each figure
# is the median of BENCH_HTTP_ROUNDS rounds, each round direct then through
# mcpreel, back to back, so that a busy machine weighs on both alike.

hs_rounds=${BENCH_HTTP_ROUNDS:-3}
hs_tput_n=${BENCH_HTTP_GW_N:-40000}
hs_lat_n=${BENCH_HTTP_GW_LATENCY_N:-3000}
hs_conns=${BENCH_HTTP_GW_CONNS:-"4 64"}
hs_modes=${BENCH_HTTP_GW_MODES:-"json chunked sse sse-split json-split"}

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
	d=() m=() ratio=() sent=0
	for ((i = 0; i < hs_rounds; i++)); do
		run "$name-direct" "$http_load" --scenario throughput --count "$hs_tput_n" \
		    --conns "$c" "http://127.0.0.1:$hs_eport/mcp" || continue
		dv=$(kv "$out" msgs_per_s)
		run "$name-mcpreel" "$http_load" --scenario throughput --count "$hs_tput_n" \
		    --conns "$c" "http://127.0.0.1:$hs_mport/mcp" || continue
		mv=$(kv "$out" msgs_per_s)
		sent=$((sent + $(kv "$out" sent)))
		d+=("$dv") m+=("$mv") ratio+=("$(calc "%.1f" "100 * $mv / $dv")")
	done
	hs_proxy_end "$name" "$db" $((2 * sent))
	stop_server "$hs_epid"
	hs[$c.d]=$(hs_median "${d[@]}") hs[$c.m]=$(hs_median "${m[@]}")
	hs[$c.ratio]=$(hs_median "${ratio[@]}") hs[$c.rss]=$hs_rss hs[$c.rows]=$rows
	hs[$c.runs]="${ratio[*]}"
done
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

echo "targets (HTTP gateway):"
report "HTTP throughput >= 50% of direct (4 conns)" "${hs[4.ratio]:--}% of direct" \
    "${hs[4.ratio]:--} >= 50" "${hs[4.ratio]:--}"
report "HTTP throughput >= 50% of direct (64 conns)" "${hs[64.ratio]:--}% of direct" \
    "${hs[64.ratio]:--} >= 50" "${hs[64.ratio]:--}"
report "HTTP added p99 <= 100 us (one at a time)" "${hs[json.a99]:--} us (json)" \
    "${hs[json.a99]:--} <= 100" "${hs[json.a99]:--}"
echo
