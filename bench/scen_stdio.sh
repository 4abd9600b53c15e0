# Sourced by bench/run.sh: stdio recorded throughput against what SQLite
# itself can insert here with mcpreel's schema (bench/sqlite_floor: the
# writer's INSERT, batch size, WAL and checkpoint policy, one thread and
# nothing else).  Each run is the floor, then the throughput scenario
# direct, then through mcpreel, back to back; the medians of
# BENCH_FLOOR_RUNS runs are kept (the machine's other load moves any one
# run by 2x).  Uses run.sh's helpers (run, stdio_pair, kv, calc, verdict).

floor_runs=${BENCH_FLOOR_RUNS:-3}
floor_n=${BENCH_FLOOR_N:-$throughput_n}
floor_bin=$build/bench/sqlite_floor

# The median of the numbers given.
median() {
	printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

echo "running stdio throughput beside the SQLite floor ($floor_runs runs of $floor_n round trips) ..."
fl_rates=(); fl_cpu=(); fd_rates=(); fm_rates=(); fm_rss=(); fl_rows="-"; fm_rows="-"
for ((i = 1; i <= floor_runs; i++)); do
	sync
	if run "floor$i" "$floor_bin" --count "$floor_n" "$tmp/floor$i.db"; then
		fl_rates+=("$(kv "$out" rows_per_s)")
		fl_cpu+=("$(kv "$out" rows_per_cpu_s)")
		fl_rows="$(kv "$out" rows) ($((2 * floor_n))) ok"
	fi
	rm -f "$tmp/floor$i.db"*
	stdio_pair "floor-tp$i" throughput --count "$floor_n"
	[ -n "${r[floor-tp$i.direct]:-}" ] && fd_rates+=("$(kv "${r[floor-tp$i.direct]}" msgs_per_s)")
	if [ -n "${r[floor-tp$i.mcpreel]:-}" ]; then
		fm_rates+=("$(kv "${r[floor-tp$i.mcpreel]}" msgs_per_s)")
		fm_rss+=("$(kv "${r[floor-tp$i.mcpreel]}" rss_kb)")
	fi
	case "${r[floor-tp$i.rows]:-}" in
	*FAIL*|"") fm_rows=${r[floor-tp$i.rows]:-"- FAIL"} ;;
	*) [ "$fm_rows" = - ] && fm_rows=${r[floor-tp$i.rows]} ;;
	esac
	rm -f "$tmp/floor-tp$i.db"*
	echo "  run $i: floor ${fl_rates[-1]:--} rows/s, direct ${fd_rates[-1]:--}," \
	    "through mcpreel ${fm_rates[-1]:--} msgs/s"
done
fl_med=$(median "${fl_rates[@]}"); fl_cpu_med=$(median "${fl_cpu[@]}")
fd_med=$(median "${fd_rates[@]}"); fm_med=$(median "${fm_rates[@]}")
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
echo "(the floor's time is its transactions and checkpoints only; through mcpreel the writer"
echo " thread shares the 2 CPUs with the forwarding thread, the load client and the echo server)"
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
