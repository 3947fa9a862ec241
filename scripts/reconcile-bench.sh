#!/usr/bin/env bash
# reconcile-bench.sh: peak RSS and speed of a reconcile dry run at two sizes
# of the orders example (about 50,000 and 500,000 orders), each against its
# floor measured in the same process: a raw scan of every table the job reads.
#
# Environment: BENCHTIME (iterations of the in-process comparison, default
# 3x), SIZES (events per store, default "100000 1000000", which make
# about 49,000 and 490,000 orders), WORK (directory for the binaries and the
# stores, default a new temporary one; stores already there are reused).
# Making the larger store applies a million events: minutes.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
sizes="${SIZES:-100000 1000000}"
work="${WORK:-$(mktemp -d)}"
mkdir -p "$work"
go build -o "$work/denorm" ./cmd/denorm
go test -c -o "$work/reconcile.test" ./reconcile

printf '%-9s %9s %10s %8s %12s %12s %7s\n' events orders "peak RSS" wall "orders/s" "floor/s" "ratio (single / planned)"
for ev in $sizes; do
  store="$work/store-$ev"
  if [[ ! -d "$store" ]]; then
    "$work/denorm" gen orders --events "$ev" --seed 1 > "$work/events.jsonl"
    # --from-start: the offset file of the previous size's events would
    # otherwise be taken for this file's.
    "$work/denorm" apply --schema examples/orders.yaml --events "$work/events.jsonl" --from-start --store "pebble://$store" > /dev/null
    rm -f "$work/events.jsonl" "$work/events.jsonl.offset"
  fi
  # Peak RSS of the command alone.
  /usr/bin/time -f '%M %e' -o "$work/time" \
    "$work/denorm" reconcile --schema examples/orders.yaml --store "pebble://$store" --dry-run --format json > "$work/report.json"
  read -r rss wall < "$work/time"
  orders=$(grep -o '"rows_scanned": *[0-9]*' "$work/report.json" | grep -o '[0-9]*$')
  # Speed against the floor, alternating in one process, with the block
  # cache the command opens the store with (cmd/denorm: scanCacheSize).
  bench=$(cd reconcile && DENORM_BENCH_STORE="pebble://$store?cache_size=8388608" "$work/reconcile.test" \
    -test.run '^$' -test.bench BenchmarkReconcileStore -test.benchtime "${BENCHTIME:-3x}" | grep '^BenchmarkReconcileStore')
  metric() { awk -v m="$1" '{for (i = 2; i <= NF; i++) if ($i == m) print $(i-1)}' <<<"$bench"; }
  printf '%-9s %9s %7d MB %7ss %12s %12s %7s\n' "$ev" "$orders" $((rss / 1024)) "$wall" \
    "$(metric reconcile_orders/s)" "$(metric floor_orders/s)" "$(metric floor_ratio) / $(metric planned_floor_ratio)"
done
