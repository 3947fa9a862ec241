#!/usr/bin/env bash
# fuzz.sh: a short run of every Fuzz target in the module, one at a time
# (go test -fuzz takes one target of one package per run).
#
# Environment: FUZZTIME (per target, default 10s).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime="${FUZZTIME:-10s}"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT

# fuzz_one runs one target, its output also in $out. It fails when the
# target does.
fuzz_one() {
  go test -run '^$' -fuzz "^${2}\$" -fuzztime "$fuzztime" "$1" 2>&1 | tee "$out"
}

# corpus lists the inputs the fuzzer has saved for a target: a failure
# that found something writes one there.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }

# coordinator_race reports whether a failed run is Go 1.26's fuzzing
# coordinator failing itself as -fuzztime runs out (golang/go#75804, fixed
# in Go 1.27): its only complaint is "context deadline exceeded", and it
# saved no input. Such a run found nothing, and is run again once.
coordinator_race() {
  [[ "$(corpus "$1" "$2")" == "$3" ]] &&
    grep -qx '    context deadline exceeded' "$out" &&
    ! grep -q -e 'Failing input written' -e '^panic:' -e '_test.go:[0-9]*:' "$out"
}

found=0
failed=()
# Every "func FuzzXxx(" in a test file, as "dir name" pairs.
while read -r file name; do
  dir="./$(dirname "$file")"
  found=$((found + 1))
  echo "fuzz.sh: $dir $name for $fuzztime"
  before="$(corpus "$dir" "$name")"
  if fuzz_one "$dir" "$name"; then
    continue
  fi
  if coordinator_race "$dir" "$name" "$before"; then
    echo "fuzz.sh: $dir $name: the fuzzing coordinator's deadline race, no input saved: running it again"
    if fuzz_one "$dir" "$name"; then
      continue
    fi
  fi
  failed+=("$dir $name")
done < <(find . -mindepth 1 \( -type d \( -name '.*' -o -name testdata -o -path ./testenv/work \) -prune \) \
    -o -type f -name '*_test.go' -print0 \
  | xargs -0 -r grep -HEo '^func Fuzz[A-Za-z0-9_]+\(' \
  | sed -E 's|^\./||; s|:func (Fuzz[A-Za-z0-9_]+)\($| \1|' | sort)
echo "fuzz.sh: ran $found targets"
if (( ${#failed[@]} > 0 )); then
  printf 'fuzz.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
