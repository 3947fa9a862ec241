#!/usr/bin/env bash
# test.sh: the whole test suite against the real services it needs.
#
# Starts each test environment under testenv/ that exists, exports what it
# prints for `eval`, runs go vet and the race-enabled tests, and always stops
# what it started, whatever happens. Exits non-zero if anything failed.
#
# Environment: DENORM_TEST_TIMEOUT (go test -timeout, default 40m),
# DENORM_TEST_PKGS (packages, default ./...).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

timeout="${DENORM_TEST_TIMEOUT:-40m}"
pkgs="${DENORM_TEST_PKGS:-./...}"

say() { printf 'test.sh: %s\n' "$*" >&2; }

# Test environments, each a script with start, stop and env commands.
services=(hbase kafka)
started=()

stop_services() {
  local s
  for s in "${started[@]}"; do
    say "stopping $s"
    bash "testenv/$s.sh" stop || say "stopping $s failed"
  done
  started=()
}
trap stop_services EXIT
trap 'say "interrupted"; exit 130' INT TERM

say "downloading Go modules"
if ! go mod download; then
  say "go mod download failed"
  exit 1
fi

env_ok=0
for s in "${services[@]}"; do
  script="testenv/$s.sh"
  if [[ ! -f "$script" ]]; then
    say "$script does not exist yet: tests that need $s will skip (or fail when CI=true)"
    continue
  fi
  say "starting $s"
  # Recorded before start, so that a start that fails half way is stopped too.
  started+=("$s")
  if ! bash "$script" start; then
    say "$s did not start; its tests will fail under CI=true. Last log lines:"
    bash "$script" logs >&2 || true
    env_ok=1
    continue
  fi
  if ! vars="$(bash "$script" env)"; then
    say "$script env failed"
    env_ok=1
    continue
  fi
  # set -a exports what env prints, whether or not it says export.
  set -a
  eval "$vars"
  set +a
  say "$s is up: $(printf '%s' "$vars" | tr '\n' ' ')"
done

say "go vet $pkgs"
go vet $pkgs
vet_status=$?

say "go test -race -count=1 -timeout $timeout $pkgs"
go test -race -count=1 -timeout "$timeout" $pkgs
test_status=$?

# The writer's convergence properties at full size (1000 histories) run
# without the race detector, which would make them ten times slower; the
# race-enabled run above covers them at a smaller size.
if (( test_status == 0 )); then
  say "go test -count=1 -run 'TestConvergence|TestFast' ./write (full size)"
  go test -count=1 -timeout "$timeout" -run 'TestConvergence|TestFast' ./write
  test_status=$?
fi
# The reconcile fault round trips, likewise (reconcile/race_on_test.go).
if (( test_status == 0 )); then
  say "go test -count=1 -run 'FaultsEveryKind' ./reconcile (without -race)"
  go test -count=1 -timeout "$timeout" -run 'FaultsEveryKind' ./reconcile
  test_status=$?
fi

stop_services

if (( test_status != 0 )); then
  say "tests failed (exit $test_status)"
  exit "$test_status"
fi
if (( vet_status != 0 )); then
  say "go vet found problems"
  exit 1
fi
if (( env_ok != 0 )); then
  say "a test environment failed to start"
  exit 1
fi
say "all tests passed"
