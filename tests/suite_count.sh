#!/bin/sh
# tests/suite_count.sh BUILDDIR: after `make check` in BUILDDIR, fails
# unless the whole suite ran there with -Werror (.ci/run runs it after
# each suite).  A green make check can hide tests that never ran: a
# build configured without Criterion has no unit test at all (issue 18).
# Checked:
#  - the configuration has Criterion and -Werror (print-check-config);
#  - every test in the build's test list (print-tests) left a result;
#  - the Criterion results number the Test() cases in tests/unit/*.c,
#    counted in the sources, so a unit test binary missing from the list
#    or dying half way shows;
#  - test-suite.log's TOTAL is the sum of those results, and its SKIP
#    the sum of their SKIP results: scripts run under the TAP driver too
#    (tests/local.mk), so each of their ok, not ok and # SKIP lines is a
#    result; a script that reported only an exit status would show here
#    as one result where its plan has many.
set -eu

say() { echo "suite_count: $*"; }
fail() { say "FAIL: $*"; exit 1; }

[ $# -eq 1 ] || { echo "usage: tests/suite_count.sh BUILDDIR" >&2; exit 64; }
cd "$1"
[ -f Makefile ] || fail "$1 has no Makefile"
src=$(sed -n 's/^abs_top_srcdir = //p' Makefile)
[ -d "$src/tests/unit" ] || fail "no source tree at '$src'"

# the last line: make may first regenerate the Makefile, saying so
config=$(make -s print-check-config | tail -n 1)
[ "$config" = "criterion=yes werror=yes" ] ||
    fail "$1 is configured with $config, not criterion=yes werror=yes"

listed=0 ran=0 results=0 unit=0 skipped=0
for t in $(make -s print-tests | tail -n 1); do
	listed=$((listed + 1))
	case $t in
	*.py | *.sh | *.mjs | *.tap) trs=${t%.*}.trs ;;
	*) trs=$t.trs ;;
	esac
	if [ ! -f "$trs" ] || ! grep -q '^:global-test-result:' "$trs"; then
		say "no result for $t"
		continue
	fi
	n=$(grep -c '^:test-result:' "$trs" || true)
	[ "$n" -gt 0 ] || { say "$t reported no test"; continue; }
	ran=$((ran + 1))
	results=$((results + n))
	skipped=$((skipped + $(grep -c '^:test-result: SKIP' "$trs" || true)))
	case ${t##*/} in
	*.*) ;;			# a script
	*) unit=$((unit + n)) ;;	# a Criterion binary (LOG_COMPILER)
	esac
done

in_sources=$(cat "$src"/tests/unit/*.c | grep -c '^Test(' || true)
total=$(sed -n 's/^# TOTAL: *//p' test-suite.log)
skip=$(sed -n 's/^# SKIP: *//p' test-suite.log)

say "$ran of $listed tests in the list ran; $unit Criterion results for" \
    "$in_sources Test() in tests/unit/*.c; $results results, TOTAL" \
    "${total:-none}; $skipped skipped, SKIP ${skip:-none}"
if [ "$listed" -eq 0 ] || [ "$ran" -ne "$listed" ]; then
	fail "$((listed - ran)) of $listed listed tests left no result"
fi
if [ "$in_sources" -eq 0 ] || [ "$unit" -ne "$in_sources" ]; then
	fail "$unit Criterion results, but $in_sources Test() in the sources"
fi
[ "${total:-x}" = "$results" ] ||
    fail "test-suite.log says TOTAL ${total:-none}, the tests $results"
[ "${skip:-x}" = "$skipped" ] ||
    fail "test-suite.log says SKIP ${skip:-none}, the tests $skipped"
say "ok"
