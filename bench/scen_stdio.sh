# Sourced by bench/run.sh: stdio recorded throughput against what SQLite
# itself can insert here with mcpreel's schema (bench/sqlite_floor: the
# writer's INSERT, batch size, WAL and checkpoint policy, one thread and
# nothing else).  Each run is the floor, then the throughput scenario
# direct, then through mcpreel (reading its writer thread's CPU time),
# back to back; the medians of
# BENCH_FLOOR_RUNS runs are kept (the machine's other load moves any one
# run by 2x).  Uses run.sh's helpers (run, stdio_pair, kv, calc, verdict).

floor_runs=${BENCH_FLOOR_RUNS:-3}
floor_n=${BENCH_FLOOR_N:-$throughput_n}
floor_bin=$build/bench/sqlite_floor

# The throughput scenario through mcpreel, as stdio_pair runs it, with
# -v so that mcpreel logs its writer thread's CPU time once, as the thread
# ends (read from the log: sampling /proc while it runs missed the end of
# short runs, and its polling took CPU from the run): NAME; the result
# line in r[NAME.mcpreel], the writer's CPU seconds in r[NAME.wcpu], the
# rows in r[NAME.rows].
floor_mcpreel() {
	local name=$1 db="$tmp/$1.db"
	if ! "$load" --scenario throughput --count "$floor_n" -- "$mcpreel" -v \
	    --log-file "$tmp/$name.log" record --db "$db" --name "bench-$name" \
	    -- "$echo_server" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
	    [ ! -s "$tmp/$name.out" ]; then
		fail "$name: the throughput scenario through mcpreel failed"
		cat "$tmp/$name.err" "$tmp/$name.log" 2>/dev/null | sed 's/^/    /' | tail -n 5
		r[$name.rows]="- FAIL"
		return
	fi
	r[$name.mcpreel]=$(cat "$tmp/$name.out")
	r[$name.wcpu]=$(sed -n 's/.*writer thread: [0-9]* items, \([0-9.]*\) s of CPU.*/\1/p' \
	    "$tmp/$name.log" | tail -n 1)
	r[$name.wcpu]=${r[$name.wcpu]:-0}
	check_rows "$name" "$db" $((2 * $(kv "${r[$name.mcpreel]}" sent)))
	r[$name.rows]=$rows
}

# The median of the numbers given.
median() {
	printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

echo "running stdio throughput beside the SQLite floor ($floor_runs runs of $floor_n round trips) ..."
fl_rates=(); fl_cpu=(); fd_rates=(); fm_rates=(); fm_rss=(); fw_rates=(); fl_rows="-"; fm_rows="-"
for ((i = 1; i <= floor_runs; i++)); do
	sync
	# This run's figures, "-" where a step failed.
	ofl=- ofc=- ofd=- ofm=- ofw=-
	if run "floor$i" "$floor_bin" --count "$floor_n" "$tmp/floor$i.db"; then
		ofl=$(kv "$out" rows_per_s); fl_rates+=("$ofl")
		ofc=$(kv "$out" rows_per_cpu_s); fl_cpu+=("$ofc")
		fl_rows="$(kv "$out" rows) ($((2 * floor_n))) ok"
	fi
	rm -f "$tmp/floor$i.db"*
	run "floor-tp$i-direct" "$load" --scenario throughput --count "$floor_n" -- \
	    "$echo_server" && ofd=$(kv "$out" msgs_per_s) && fd_rates+=("$ofd")
	floor_mcpreel "floor-tp$i"
	if [ -n "${r[floor-tp$i.mcpreel]:-}" ]; then
		ofm=$(kv "${r[floor-tp$i.mcpreel]}" msgs_per_s); fm_rates+=("$ofm")
		fm_rss+=("$(kv "${r[floor-tp$i.mcpreel]}" rss_kb)")
		w=${r[floor-tp$i.wcpu]}
		awk "BEGIN { exit !($w > 0) }" &&
		    ofw=$(calc "%.0f" "2 * $(kv "${r[floor-tp$i.mcpreel]}" sent) / $w") &&
		    fw_rates+=("$ofw")
	fi
	case "${r[floor-tp$i.rows]:-}" in
	*FAIL*|"") fm_rows=${r[floor-tp$i.rows]:-"- FAIL"} ;;
	*) [ "$fm_rows" = - ] && fm_rows=${r[floor-tp$i.rows]} ;;
	esac
	rm -f "$tmp/floor-tp$i.db"*
	echo "  run $i: floor $ofl rows/s ($ofc per CPU s)," \
	    "direct $ofd, through mcpreel $ofm msgs/s" \
	    "(writer thread $ofw per CPU s)"
done
fl_med=$(median "${fl_rates[@]}"); fl_cpu_med=$(median "${fl_cpu[@]}")
fd_med=$(median "${fd_rates[@]}"); fm_med=$(median "${fm_rates[@]}")
fw_med=$(median "${fw_rates[@]}"); fw_med=${fw_med:--}
fm_rss_max=$(printf '%s\n' "${fm_rss[@]}" | sort -n | tail -n 1)
fl_med=${fl_med:--}; fl_cpu_med=${fl_cpu_med:--}; fd_med=${fd_med:--}; fm_med=${fm_med:--}
fl_share="-"
[ "$fl_med" != - ] && [ "$fm_med" != - ] && fl_share=$(calc "%.1f" "100 * $fm_med / $fl_med")

echo
echo "stdio recording against the SQLite floor (medians of $floor_runs runs; rows/s count rows, msgs/s both directions):"
printf "%-34s | %12s | %15s | %20s | %16s | %26s\n" "scenario" "direct" "through mcpreel" \
    "added / ratio" "mcpreel peak RSS" "recorded rows (expected)"
printf "%-34s | %12s | %15s | %20s | %16s | %26s\n" "----------------------------------" \
    "------------" "---------------" "--------------------" "----------------" \
    "--------------------------"
printf "%-34s | %12s | %15s | %20s | %16s | %26s\n" "SQLite bare insert loop (rows/s)" "-" \
    "$fl_med" "$fl_cpu_med per CPU s" "-" "$fl_rows"
printf "%-34s | %12s | %15s | %20s | %16s | %26s\n" "stdio throughput (msgs/s)" "$fd_med" "$fm_med" \
    "$(pct "$fd_med" "$fm_med")" "$(mib "${fm_rss_max:-}")" "$fm_rows"
printf "%-34s | %12s | %15s | %20s | %16s | %26s\n" "stdio recorded as % of the floor" "-" \
    "$fl_share%" "-" "" ""
fw_share="-"
[ "$fl_cpu_med" != - ] && [ "$fw_med" != - ] && fw_share=$(calc "%.1f%% of the floor's" "100 * $fw_med / $fl_cpu_med")
printf "%-34s | %12s | %15s | %20s | %16s | %26s\n" "writer thread (rows per CPU s)" "-" \
    "$fw_med" "$fw_share" "" ""
echo "(the floor's time is its transactions and checkpoints only, wall clock and CPU; through"
echo " mcpreel the writer thread shares the 2 CPUs with the forwarding thread, the load client"
echo " and the echo server, and with whatever else runs: its rows per CPU second do not depend"
echo " on that)"
echo
floor_target="  $(printf "%-50s %-36s" ">= 80% of what SQLite can insert (stdio)" \
    "$fm_med of $fl_med/s, $fl_share%")"
if [ "$fl_share" = - ]; then
	floor_target="$floor_target not measured (a run failed)"
else
	floor_target="$floor_target $(verdict "$fm_med >= 0.8 * $fl_med")"
fi
echo "target:"
echo "$floor_target"
echo
