#!/bin/sh
# Run the criterion unit tests of a build and fail on any sanitizer report:
# criterion counts a test that leaked as passed, LeakSanitizer only says so.
#   scripts/unit.sh BUILD_DIR [JOBS]
set -u
build=${1:?usage: scripts/unit.sh BUILD_DIR [JOBS]}
log=$build/unit.log
"$build/tests/unit/unit_tests" --jobs "${2:-2}" >"$log" 2>&1
rc=$?
cat "$log"
if grep -q "Sanitizer" "$log"; then
	echo "unit tests: a sanitizer reported a problem (see above)" >&2
	exit 1
fi
exit $rc
