#!/usr/bin/env bash
# compare.sh BASE [bench flags...]: make bench-compare. Builds the bench
# harness (and with it the sink) of commit BASE and of the working tree, and
# runs the same workloads on both in one run, interleaved round by round
# (tools/bench -base), against the running test services. The table at the
# end gives, per workload, this build's throughput, CPU per record and peak
# RSS as ratios of the base's.
set -euo pipefail
base=${1:?usage: compare.sh BASE [bench flags]}
shift
root=$(git rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse --short=12 "$base^{commit}")
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
git -C "$root" archive "$commit" | tar -x -C "$work"
# The harness lived in bench/ until issue 21 moved it to tools/bench.
dir=tools/bench
[ -d "$work/$dir" ] || dir=bench
[ -d "$work/$dir" ] || { echo "compare.sh: $commit has no bench harness (bench/ or tools/bench/)" >&2; exit 2; }
echo "bench-compare: building $commit ($dir)" >&2
(cd "$work" && go build -o "$work/bench-$commit" "./$dir")
cd "$root"
go build -o "$work/bench-head" ./tools/bench
out=tools/bench/results/compare-$commit-$(date -u +%Y%m%dT%H%M%SZ).json
"$work/bench-head" -base "$work/bench-$commit" -no-memory -no-recovery -no-assignment -out "$out" "$@"
