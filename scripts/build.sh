#!/bin/sh
# Install what is missing and build mcpreel, quietly, for make demo: the
# output of scripts/deps.sh and CMake goes to BUILD/build.log and the
# terminal gets one line for each (the build's with its progress, on a
# terminal); if a step fails, its last lines, the log's path, and exit 1.
#   scripts/build.sh BUILD [DEPS]
# DEPS is what scripts/deps.sh installs first (none if not given).  A
# BUILD directory already configured is built as it was configured (a
# sanitizer build stays one); a new one is configured RelWithDebInfo, as
# make build does.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
deps=${2:-}
jobs=${JOBS:-2}
# How much of the log a failure shows: enough for a compiler error with
# its context, or apt's and npm's last complaint.
tail_lines=30

# CMake's make runs as a make of its own, not as a sub-make of make demo's.
unset MAKEFLAGS MFLAGS MAKELEVEL
mkdir -p "$build"
log=$build/build.log
: >"$log"
tty=0
[ -t 1 ] && tty=1

fail()
{
	echo " failed"
	{
		echo "mcpreel: $1 failed; the last $tail_lines lines of $log:"
		tail -n "$tail_lines" "$log"
		echo "(the whole log: $log)"
	} >&2
	exit 1
}

if [ -n "$deps" ]; then
	printf 'checking dependencies (scripts/deps.sh %s)...' "$deps"
	"$top/scripts/deps.sh" "$deps" >>"$log" 2>&1 ||
		fail "scripts/deps.sh $deps"
	echo " ok"
fi

printf 'building mcpreel in %s/...' "$build"
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    >>"$log" 2>&1 || fail "configuring the build (cmake)"
fi
# The build runs aside while its percentage, the last CMake printed, is
# shown in place on a terminal.
cmake --build "$build" -j "$jobs" >>"$log" 2>&1 &
pid=$!
shown=
while kill -0 "$pid" 2>/dev/null; do
	if [ "$tty" = 1 ]; then
		pct=$(grep -o '^\[ *[0-9]*%\]' "$log" | tail -n 1 | tr -d '[] ')
		[ -n "$pct" ] && [ "$pct" != "$shown" ] &&
		    printf '\rbuilding mcpreel in %s/... %4s' "$build" "$pct"
		shown=$pct
	fi
	sleep 0.5
done
status=0
wait "$pid" || status=$?
[ "$tty" = 1 ] && printf '\rbuilding mcpreel in %s/...     \rbuilding mcpreel in %s/...' "$build" "$build"
[ "$status" = 0 ] || fail "building (cmake --build $build)"
echo " done: $build/mcpreel (log: $log)"
