#!/usr/bin/env bash
# Runs every fuzz target of the module, one after the other: the packages
# whose tests define one, and go test -list '^Fuzz' for their names on
# this GOOS (build tags apply).
#   bash scripts/fuzz.sh                  each target for FUZZTIME (default 60s)
#   FUZZBUDGET=60 bash scripts/fuzz.sh    at most 60 seconds of fuzz runs in all,
#                                         split evenly (.ci/run); building the
#                                         instrumented test binaries comes on top
# A failing input is written to the package's testdata/fuzz/ and the run
# stops there.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

# One go test -list for all the packages: it prints each package's names,
# then "ok  <import path>".
mapfile -t dirs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
module=$($GO list -m)
targets=()
names=()
while read -r first second _; do
	case "$first" in
	Fuzz*) names+=("$first") ;;
	ok)
		for name in "${names[@]}"; do
			targets+=(".${second#"$module"} $name")
		done
		names=()
		;;
	esac
done < <($GO test -list '^Fuzz' "${dirs[@]}")
n=${#targets[@]}
if [ "$n" -eq 0 ]; then
	echo "fuzz: no targets found" >&2
	exit 1
fi
if [ -n "${FUZZBUDGET:-}" ]; then
	# A second of each target's share goes to starting the fuzzer and
	# its baseline coverage pass over the corpus.
	per=$(((FUZZBUDGET * 1000 - n * 1000) / n))
	if [ "$per" -lt 500 ]; then
		echo "fuzz: a budget of ${FUZZBUDGET}s leaves under 500ms of fuzzing for each of $n targets" >&2
		exit 1
	fi
	time=${per}ms
else
	time=${FUZZTIME:-60s}
fi
# files counts the files in a corpus directory, 0 when there is none.
files() {
	if [ -d "$1" ]; then
		find "$1" -type f | wc -l
	else
		echo 0
	fi
}

echo "fuzz: $n targets, $time each"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "fuzz: $pkg $name"
	corpus="$pkg/testdata/fuzz/$name"
	before=$(files "$corpus")
	if $GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$time" "$pkg" >"$log" 2>&1; then
		cat "$log"
		continue
	fi
	# Go 1.26's fuzzer may report its own -fuzztime deadline as a
	# failure when a loaded machine makes a worker late
	# (go.dev/issue/75804): no input failed, none was written. Its
	# output is left out then, so that no FAIL line reads as a failure.
	after=$(files "$corpus")
	if [ "$after" -eq "$before" ] && grep -q '^    context deadline exceeded$' "$log"; then
		grep '^fuzz: elapsed' "$log" | tail -n 1 || true
		echo "fuzz: $pkg $name: stopped by the fuzzer's own deadline (go.dev/issue/75804), no failing input: not a failure"
		continue
	fi
	cat "$log"
	exit 1
done
