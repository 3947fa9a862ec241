#!/usr/bin/env bash
# demo.sh: the first thing to run. On the embedded store in ./denorm-data:
# reviews the order history schema, generates an order event stream (with
# duplicates and reordering, as a real log has) and applies it to every copy
# the schema declares, then shows the tables; and, with the command's small
# shell, creates a table, writes a few cells and reads them back.
# It runs again safely: the apply is idempotent and the shell demo drops its
# own table first.
#
# Environment: DENORM_STORE (default pebble://./denorm-data).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export DENORM_STORE="${DENORM_STORE:-pebble://./denorm-data}"
bin=bin/denorm
table=demo_orders

# step shows a command as one would type it (quoting what the shell would
# otherwise eat), then runs it.
step() {
  local a shown=""
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_.:,=/-]+$ ]]; then shown+=" $a"; else shown+=" '$a'"; fi
  done
  printf '\n$ denorm%s\n' "$shown"
  "$bin" "$@"
}

echo "demo: store $DENORM_STORE"
events=./denorm-data-events/orders.jsonl
mkdir -p "$(dirname "$events")"
step review examples/orders.yaml || true
step gen orders --events 20000 --seed 1 --reorder 0.05 --duplicate 0.05 --deletes 0.01 --out "$events"
step apply --schema examples/orders.yaml --events "$events" --from-start
step table list
step scan orders --limit 2
# The same rows read by the schema: key parts by name, items as fields.
step scan orders --schema examples/orders.yaml --limit 2
step scan orders_by_status --schema examples/orders.yaml --limit 2
step scan daily_units --schema examples/orders.yaml --limit 1
step query --schema examples/orders.yaml orders_by_status status=OPEN --limit 3
# Every copy checked against the primary rows: a dry run exits 1 on a difference.
step reconcile --schema examples/orders.yaml --dry-run

if "$bin" table list --format json | grep -q "\"$table\""; then
  step table drop "$table"
fi
step table create "$table" --family 'd:versions=3,compression=SNAPPY,encoding=FAST_DIFF' --family i --split c3
step put "$table" 'c1\x00o1' d:s placed --ts 1
step put "$table" 'c1\x00o1' d:s paid --ts 2
step put "$table" 'c1\x00o1' 'i:\x00\x01' 'sku-9 x2' --ts 2
step put "$table" 'c1\x00o2' d:s placed --ts 1
step put "$table" 'c2\x00o3' d:s shipped --ts 5
step get "$table" 'c1\x00o1' --versions 3
step scan "$table" --prefix 'c1\x00'
step scan "$table" --reverse --limit 2 --format json
step table describe "$table"
