#!/usr/bin/env bash
# writer-bench.sh: every figure issue 17 (writer speed) sets a target for,
# measured in one run on this machine, one benchmark after another, and
# printed as one table against its target:
#
#   - the writer against raw Pebble writing the same cells (BenchmarkApplyPaired);
#   - units/s of the first and last 20,000 events of a long stream applied
#     to one store (BenchmarkGrowth);
#   - the writer against the buffered mutator on the test HBase
#     (BenchmarkApplyHBasePaired; the script starts HBase and stops it again);
#   - the store's scan against raw Pebble (store/pebble BenchmarkPaired);
#   - the thin, verified index read against the covering one
#     (read BenchmarkStatusThinPaired).
#
# Each benchmark compares against its baseline inside every iteration, so
# the ratios hold up on a machine whose load changes; run it with nothing
# else on the machine all the same. With the defaults it takes about 20
# minutes, most of it the growth run.
#
# Environment: GROWTH_EVENTS (default 1000000; 200000 takes a minute or
# two), HBASE (1, the default, measures on the test HBase; 0 skips it),
# RUNS (runs of each paired benchmark, default 3: the table shows their
# median), WORK (directory for binaries and logs, default a new temporary
# one). Raw benchmark output is kept in $WORK/*.out.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
growth="${GROWTH_EVENTS:-1000000}"
runs="${RUNS:-3}"
work="${WORK:-$(mktemp -d)}"
mkdir -p "$work"
echo "writer-bench: binaries and output in $work" >&2

go test -c -o "$work/write.test" ./write
go test -c -o "$work/pebble.test" ./store/pebble
go test -c -o "$work/read.test" ./read

# bench DIR BIN PATTERN BENCHTIME OUT: runs the benchmarks PATTERN names
# once, appending their output to OUT. Benchmarks find their fixtures
# relative to their package.
bench() {
  (cd "$1" && "$work/$2" -test.run '^$' -test.bench "$3" -test.benchtime "$4") >> "$work/$5"
}

# results NAME OUT: the result lines of benchmark NAME in OUT.
results() {
  grep -E "^$1(-[0-9]+)?[[:space:]]" "$work/$2" || {
    echo "writer-bench: $1 printed no result (see $work/$2)" >&2
    return 1
  }
}

# metric NAME: the value printed before unit NAME on a result line (stdin).
metric() { awk -v m="$1" '{for (i = 2; i <= NF; i++) if ($i == m) print $(i-1)}'; }

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

rows=()
row() { rows+=("$(printf '%-44s %-26s %-10s %s' "$1" "$2" "$3" "$4")"); }
# met VALUE OP TARGET: "met" or "not met".
met() { awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {ok = (op == ">=") ? v >= t : v <= t; print ok ? "met" : "not met"}'; }

# The writer against raw Pebble, and its allocations and CPU per event.
: > "$work/apply.out"
for ((i = 0; i < runs; i++)); do bench write write.test '^BenchmarkApplyPaired$' 4x apply.out; done
lines=$(results BenchmarkApplyPaired apply.out)
r=$(metric ratio <<<"$lines" | median)
row "writer / raw Pebble (ApplyPaired)" "$(metric ratio <<<"$lines" | paste -sd/ -)" ">= 0.6" "$(met "$r" '>=' 0.6) (median $r)"
row "  allocations per event" "$(metric allocs/event <<<"$lines" | median)" "" ""
row "  CPU us per event" "$(metric cpu-us/event <<<"$lines" | median)" "" ""
row "  events/s" "$(metric events/s <<<"$lines" | median)" "" ""

# Growth: one long stream into one store.
: > "$work/growth.out"
DENORM_GROWTH_EVENTS="$growth" bench write write.test '^BenchmarkGrowth$' 1x growth.out
line=$(results BenchmarkGrowth growth.out)
g=$(metric last/first-units <<<"$line")
row "growth at $growth events: last/first units/s" "$g" ">= 0.75" "$(met "$g" '>=' 0.75)"
row "  first / last units/s" "$(metric first-units/s <<<"$line") / $(metric last-units/s <<<"$line")" "" ""
row "  last window's fan-out units/s" "$(metric last-fanout/s <<<"$line")" "" ""

# The store's scan against raw Pebble.
: > "$work/scan.out"
for ((i = 0; i < runs; i++)); do bench store/pebble pebble.test '^BenchmarkPaired$/^scan$' 40x scan.out; done
lines=$(results BenchmarkPaired/scan scan.out)
r=$(metric ratio <<<"$lines" | median)
row "store scan / raw Pebble (Paired)" "$(metric ratio <<<"$lines" | paste -sd/ -)" ">= 0.7" "$(met "$r" '>=' 0.7) (median $r)"

# The thin verified read against the covering one.
: > "$work/thin.out"
for ((i = 0; i < runs; i++)); do bench read read.test '^BenchmarkStatusThinPaired$' 40x thin.out; done
lines=$(results BenchmarkStatusThinPaired thin.out)
r=$(metric thin/covering <<<"$lines" | median)
row "thin verified / covering read" "$(metric thin/covering <<<"$lines" | paste -sd/ -)" "<= 3" "$(met "$r" '<=' 3) (median $r)"

# The writer against the buffered mutator on the test HBase.
if [[ "${HBASE:-1}" == 1 ]]; then
  bash testenv/hbase.sh start >&2
  trap 'bash testenv/hbase.sh stop >&2' EXIT
  export $(bash testenv/hbase.sh env)
  : > "$work/hbase.out"
  for ((i = 0; i < runs; i++)); do bench write write.test '^BenchmarkApplyHBasePaired$' 4x hbase.out; done
  lines=$(results BenchmarkApplyHBasePaired hbase.out)
  r=$(metric ratio <<<"$lines" | median)
  row "writer / buffered mutator on HBase" "$(metric ratio <<<"$lines" | paste -sd/ -)" ">= 0.5" "$(met "$r" '>=' 0.5) (median $r)"
  row "  serial (Apply) / buffered mutator" "$(metric serial-ratio <<<"$lines" | paste -sd/ -)" "" ""
  row "  events/s" "$(metric events/s <<<"$lines" | median)" "" ""
fi

printf '%-44s %-26s %-10s %s\n' figure "each run" target status
printf '%s\n' "${rows[@]}"
