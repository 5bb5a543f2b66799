#!/usr/bin/env bash
# Runs every Fuzz* target in the module for the given time (10s) or count
# (3000x) each; default 10s.
set -euo pipefail
t=${1:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f for $t"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg"
  done
done
# The supervisor's randomized invariant test, with more sequences than make test runs.
echo "invariants: ${PODVISOR_INVARIANT_N:=50000} sequences"
PODVISOR_INVARIANT_N=$PODVISOR_INVARIANT_N go test -run '^TestInvariants$' -count=1 -timeout 20m ./internal/supervisor/
