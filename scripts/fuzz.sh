#!/bin/sh
# Build the libFuzzer targets (clang, -DMCPREEL_FUZZ=ON) and run each for a
# while, one after the other, starting from the seed corpus.  Fail if any
# target finds a crash, a leak, a timeout or a disagreement, saying which
# and where its reproducer is.
#   scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]
#
# Each target works in BUILD_DIR/fuzz/TARGET/: corpus/ starts as a copy of
# tests/fuzz/corpus/TARGET/ and keeps what runs add (so later runs start
# further on; the repository is never written), artifacts/ gets what a
# failing run leaves, log is libFuzzer's output.
set -u

usage="usage: scripts/fuzz.sh BUILD_DIR SECONDS [scan|frame|sse|http|redact|ident|jsonschema|protocol|check|jload|fault|restamp|otlp|hosts|endpoint ...]"
build=${1:?$usage}
secs=${2:?$usage}
shift 2
targets=${*:-scan frame sse http redact ident jsonschema protocol check jload fault restamp otlp hosts endpoint}
src=$(cd "$(dirname "$0")/.." && pwd)
# A single input taking this long is a hang, even on a busy machine.
unit_timeout=10
# The most memory a target may use before libFuzzer calls it a leak or
# runaway allocation.
rss_limit_mb=2048

case "$secs" in
''|*[!0-9]*) echo "$usage" >&2; exit 2 ;;
esac

# The first configure decides the compiler; later ones only check it.
mkdir -p "$build"
if ! CC=${CC:-clang} cmake -S "$src" -B "$build" -DMCPREEL_FUZZ=ON \
    -DMCPREEL_TESTS=OFF -DMCPREEL_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
    >"$build/configure.log" 2>&1; then
	cat "$build/configure.log" >&2
	echo "fuzz: configuring $build failed (see above)" >&2
	exit 1
fi
cmake --build "$build" --target fuzz_targets -j "${JOBS:-2}" || {
	echo "fuzz: building the fuzz targets in $build failed" >&2
	exit 1
}

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=""
for t in $targets; do
	bin=$build/tests/fuzz/fuzz_$t
	work=$build/fuzz/$t
	if [ ! -x "$bin" ]; then
		echo "fuzz: no target $bin ($usage)" >&2
		exit 2
	fi
	mkdir -p "$work/corpus" "$work/artifacts"
	rm -f "$work/artifacts/"*
	cp "$src/tests/fuzz/corpus/$t/"* "$work/corpus/"
	dict=""
	[ -f "$src/tests/fuzz/$t.dict" ] && dict="-dict=$src/tests/fuzz/$t.dict"

	echo "fuzz: fuzz_$t for ${secs}s ..."
	"$bin" -max_total_time="$secs" -timeout="$unit_timeout" \
	    -rss_limit_mb="$rss_limit_mb" -print_final_stats=1 \
	    -artifact_prefix="$work/artifacts/" $dict "$work/corpus" \
	    >"$work/log" 2>&1
	rc=$?

	# The last status line has the coverage; the final stats the rest.
	status=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	persec=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
	cov=$(echo "$status" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$status" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$status" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
	if [ "$rc" -eq 0 ]; then
		echo "fuzz: fuzz_$t ok: ${execs:-?} inputs (${persec:-?}/s)," \
		    "cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
		continue
	fi
	failed="$failed fuzz_$t"
	echo "fuzz: fuzz_$t FAILED (exit $rc) after ${execs:-?} inputs;" \
	    "the end of $work/log:" >&2
	grep -v -E '^#[0-9]+|Uses: ' "$work/log" | tail -n 40 >&2
	for a in "$work/artifacts/"*; do
		[ -e "$a" ] || continue
		echo "fuzz: reproducer: $a (run: $bin $a)" >&2
	done
done

if [ -n "$failed" ]; then
	echo "fuzz: found a problem in:$failed" >&2
	exit 1
fi
echo "fuzz: no findings ($targets, ${secs}s each)"
