#!/usr/bin/env bash
# writer-bench.sh: every figure issue 17 (writer speed) sets a target for,
# measured in one run on this machine, one benchmark after another, and
# printed as one table against its target:
#
#   - the writer against raw Pebble writing the same cells (BenchmarkApplyPaired),
#     and beside it the writer's store calls replayed without the writer
#     (BenchmarkStoreReplayPaired), the most that ratio could be;
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

# bench DIR BIN PATTERN BENCHTIME OUT [FLAG...]: runs the benchmarks
# PATTERN names once, appending their output to OUT; FLAGs go to the test
# binary as well. Benchmarks find their fixtures relative to their package.
bench() {
  local dir="$1" bin="$2" pattern="$3" benchtime="$4" out="$5"
  shift 5
  (cd "$dir" && "$work/$bin" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" "$@") >> "$work/$out"
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

# paired LABEL DIR BIN NAME BENCHTIME METRIC OP TARGET: runs benchmark
# NAME RUNS times and adds a row with METRIC of each run, against TARGET;
# the result lines are left in $lines for the rows that follow.
paired() {
  local out="${4//\//-}.out" top="${4%%/*}" sub="${4#*/}"
  local pattern="^$top\$" # ^BenchmarkPaired$/^scan$ for BenchmarkPaired/scan
  if [[ "$sub" != "$4" ]]; then pattern+="/^$sub\$"; fi
  : > "$work/$out"
  for ((i = 0; i < runs; i++)); do bench "$2" "$3" "$pattern" "$5" "$out"; done
  lines=$(results "$4" "$out")
  local r
  r=$(metric "$6" <<<"$lines" | median)
  row "$1" "$(metric "$6" <<<"$lines" | paste -sd/ -)" "$7 $8" "$(met "$r" "$7" "$8") (median $r)"
}

# The writer against raw Pebble, and its allocations and CPU per event.
paired "writer / raw Pebble (ApplyPaired)" write write.test BenchmarkApplyPaired 4x ratio '>=' 0.6
row "  allocations per event" "$(metric allocs/event <<<"$lines" | median)" "" ""
row "  CPU us per event" "$(metric cpu-us/event <<<"$lines" | median)" "" ""
row "  events/s" "$(metric events/s <<<"$lines" | median)" "" ""
# The most that ratio could be with none of the writer's own work: the
# store calls it made, replayed into a fresh store (StoreReplayPaired).
: > "$work/replay.out"
bench write write.test '^BenchmarkStoreReplayPaired$' 4x replay.out
line=$(results BenchmarkStoreReplayPaired replay.out)
row "  its store calls alone / raw Pebble" "$(metric serial-ratio <<<"$line") in turn, $(metric concurrent-ratio <<<"$line") at once" "" ""

# Growth: one long stream into one store. With -test.v the benchmark logs
# every window as it ends, so growth.out keeps the whole series (without it
# the testing package keeps the first ten lines of a benchmark's log).
: > "$work/growth.out"
DENORM_GROWTH_EVENTS="$growth" bench write write.test '^BenchmarkGrowth$' 1x growth.out -test.v
line=$(results BenchmarkGrowth growth.out)
g=$(metric last/first-units <<<"$line")
row "growth at $growth events: last/first units/s" "$g" ">= 0.75" "$(met "$g" '>=' 0.75)"
row "  first / last units/s" "$(metric first-units/s <<<"$line") / $(metric last-units/s <<<"$line")" "" ""
row "  last window's fan-out units/s" "$(metric last-fanout/s <<<"$line")" "" ""

# The store's scan against raw Pebble, and the thin verified read against
# the covering one.
# Runs of a few seconds each (a scan of the store takes about 20 ms, a
# pair of reads about 2 ms): a run of 40 pairs lasts a tenth of a second,
# and one of them measured three times the others' ratio.
paired "store scan / raw Pebble (Paired)" store/pebble pebble.test BenchmarkPaired/scan 200x ratio '>=' 0.7
paired "thin verified / covering read" read read.test BenchmarkStatusThinPaired 2000x thin/covering '<=' 3

# The writer against the buffered mutator on the test HBase.
if [[ "${HBASE:-1}" == 1 ]]; then
  bash testenv/hbase.sh start >&2
  trap 'bash testenv/hbase.sh stop >&2' EXIT
  export $(bash testenv/hbase.sh env)
  # The first run on a server just started is slow on both sides (the
  # server warms its caches and its code), and its ratio swings most: one
  # short run goes first, shown and not counted.
  : > "$work/hbase-warmup.out"
  bench write write.test '^BenchmarkApplyHBasePaired$' 1x hbase-warmup.out
  warm=$(results BenchmarkApplyHBasePaired hbase-warmup.out | metric ratio)
  paired "writer / buffered mutator on HBase" write write.test BenchmarkApplyHBasePaired 4x ratio '>=' 0.5
  row "  serial (Apply) / buffered mutator" "$(metric serial-ratio <<<"$lines" | paste -sd/ -)" "" ""
  row "  events/s" "$(metric events/s <<<"$lines" | median)" "" ""
  row "  warm-up run, not counted" "$warm" "" ""
fi

printf '%-44s %-26s %-10s %s\n' figure "each run" target status
printf '%s\n' "${rows[@]}"
