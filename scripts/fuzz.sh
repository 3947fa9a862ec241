#!/usr/bin/env bash
# fuzz.sh: a short run of every Fuzz target in the module, one at a time
# (go test -fuzz takes one target of one package per run).
#
# Environment: FUZZTIME (per target, default 10s).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime="${FUZZTIME:-10s}"

found=0
failed=()
# Every "func FuzzXxx(" in a test file, as "dir name" pairs.
while read -r file name; do
  dir="./$(dirname "$file")"
  found=$((found + 1))
  echo "fuzz.sh: $dir $name for $fuzztime"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$dir"; then
    failed+=("$dir $name")
  fi
done < <(find . -mindepth 1 \( -type d \( -name '.*' -o -name testdata -o -path ./testenv/work \) -prune \) \
    -o -type f -name '*_test.go' -print0 \
  | xargs -0 -r grep -HEo '^func Fuzz[A-Za-z0-9_]+\(' \
  | sed -E 's|^\./||; s|:func (Fuzz[A-Za-z0-9_]+)\($| \1|' | sort)
echo "fuzz.sh: ran $found targets"
if (( ${#failed[@]} > 0 )); then
  printf 'fuzz.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
