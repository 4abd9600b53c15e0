# Sourced by bench/run.sh (its variables and helpers: $mcpreel, $load,
# $echo_server, $tmp, fail, mib, calc, kv, verdict).
#
# replay and mock of a big recorded session, at 100 k and at 1 M messages:
# wall time and peak RSS of each, and whether RSS stays flat (the 1 M run
# within 2x of the 100 k one).  The sessions are the ones a scenario
# before this one exported (BIG_DB, BIG_SESSION for 1 M, BIG_SMALL_SESSION
# for 100 k, recorded with `load --scenario throughput` through `mcpreel
# record`), else recorded here the same way.  mock is driven by the same
# load client, which sends the same requests as when recorded (numbered
# from 1, 200 B) and checks every answer (id, order, length).

# Messages in the two sessions (2 per round trip).
big_replay_n=${BENCH_BIG_REPLAY_N:-1000000}
big_replay_small_n=${BENCH_BIG_REPLAY_SMALL_N:-100000}
# Seconds the load client waits for a whole mock run: a 1 M mock on a
# loaded 2-core machine takes minutes.
big_replay_timeout=${BENCH_BIG_REPLAY_TIMEOUT:-1800}

# Record a session of N messages into DB under NAME, unless given.
big_replay_record() {
	local db=$1 name=$2 n=$3
	"$load" --scenario throughput --count $((n / 2)) \
	    --timeout "$big_replay_timeout" -- "$mcpreel" record --db "$db" \
	    --name "$name" -- "$echo_server" > "$tmp/bigr_rec_$name.out" 2>&1
}

# Run a command under /usr/bin/time: its "wall_s rss_kb" on stdout, or
# "- -" and the reason on stderr when it failed (run in a subshell: the
# caller marks the run broken).  NAME CMD...
big_replay_time() {
	local name=$1 t
	shift
	if /usr/bin/time -f "%e %M" -o "$tmp/bigr_$name.time" "$@" \
	    > "$tmp/bigr_$name.out" 2>&1; then
		t=$(tail -1 "$tmp/bigr_$name.time")
		echo "$t"
	else
		echo "FAIL: big replay: $name: $(tail -2 "$tmp/bigr_$name.out" |
		    tr '\n' ' ')" >&2
		echo "- -"
	fi
}

# One table row: COMMAND SMALL(wall rss) BIG(wall rss).
big_replay_row() {
	local what=$1 sw=$2 sr=$3 bw=$4 br=$5 ratio flat
	if [ "$sr" = - ] || [ "$br" = - ]; then
		ratio=- flat="not measured (a run failed)"
	else
		ratio=$(calc "%.1fx" "$br / $sr")
		flat=$(verdict "$br <= 2 * $sr")
	fi
	printf "  %-8s %12s %12s %12s %12s %8s  %s\n" "$what" "$sw s" \
	    "$(mib "${sr/-/}")" "$bw s" "$(mib "${br/-/}")" "$ratio" "$flat"
}

echo "big sessions: replay and mock (message counts in the columns)"
if ! [ -x /usr/bin/time ]; then
	echo "  not measured: /usr/bin/time is missing (Debian package time)"
else
	if [ -n "${BIG_DB:-}" ] && [ -n "${BIG_SESSION:-}" ] &&
	    [ -n "${BIG_SMALL_SESSION:-}" ]; then
		bigr_db=$BIG_DB bigr_big=$BIG_SESSION bigr_small=$BIG_SMALL_SESSION
		# Their sizes are scen_big.sh's (BENCH_BIG_N, BENCH_BIG_SMALL_N):
		# the mock's client must send as many requests as were recorded.
		bigr_bn=${big_n:-$big_replay_n} bigr_sn=${big_small_n:-$big_replay_small_n}
	else
		bigr_db=$tmp/big_replay.db bigr_big=big bigr_small=small
		bigr_bn=$big_replay_n bigr_sn=$big_replay_small_n
		big_replay_record "$bigr_db" small "$bigr_sn" ||
		    fail "big replay: recording $bigr_sn messages failed"
		big_replay_record "$bigr_db" big "$bigr_bn" ||
		    fail "big replay: recording $bigr_bn messages failed"
	fi
	read -r rp_sw rp_sr <<<"$(big_replay_time replay_small "$mcpreel" \
	    replay --db "$bigr_db" --no-record "$bigr_small" -- "$echo_server")"
	read -r rp_bw rp_br <<<"$(big_replay_time replay_big "$mcpreel" \
	    replay --db "$bigr_db" --no-record "$bigr_big" -- "$echo_server")"
	read -r mk_sw mk_sr <<<"$(big_replay_time mock_small "$load" \
	    --scenario throughput --count $((bigr_sn / 2)) --timeout \
	    "$big_replay_timeout" -- "$mcpreel" mock --db "$bigr_db" "$bigr_small")"
	read -r mk_bw mk_br <<<"$(big_replay_time mock_big "$load" \
	    --scenario throughput --count $((bigr_bn / 2)) --timeout \
	    "$big_replay_timeout" -- "$mcpreel" mock --db "$bigr_db" "$bigr_big")"
	for v in "$rp_sr" "$rp_br" "$mk_sr" "$mk_br"; do
		[ "$v" = - ] && broken=1
	done
	printf "  %-8s %12s %12s %12s %12s %8s  %s\n" command "$bigr_sn wall" \
	    "$bigr_sn RSS" "$bigr_bn wall" "$bigr_bn RSS" ratio "flat (<= 2x)"
	big_replay_row replay "$rp_sw" "$rp_sr" "$rp_bw" "$rp_br"
	big_replay_row mock "$mk_sw" "$mk_sr" "$mk_bw" "$mk_br"
	echo "  (wall: the whole command, the server or client included;" \
	    "RSS: /usr/bin/time's peak, mcpreel's own or a child's, whichever is larger)"
fi
echo
