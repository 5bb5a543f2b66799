#!/bin/sh
# Test step: runs dist/wordcount on a few inputs, prints TAP and exits with
# the number of failed tests (0 when all pass). TEST_PAUSE=N waits N seconds
# after each test, to watch the job (or stop it) while it runs.
set -u
cd "$(dirname "$0")"
n=0
failed=0
trap 'echo "interrupted after $n tests"; exit 143' TERM
check() { # check NAME INPUT WANT
  n=$((n + 1))
  got=$(printf '%s' "$2" | dist/wordcount)
  if [ "$got" = "$3" ]; then
    echo "ok $n - $1"
  else
    echo "not ok $n - $1: got '$got', want '$3'"
    failed=$((failed + 1))
  fi
  if [ "${TEST_PAUSE:-0}" != 0 ]; then
    sleep "$TEST_PAUSE"
  fi
}
check "empty input" "" 0
check "one word" "hello" 1
check "two lines" "a b
c" 3
check "tabs and spaces" "a	 b   c d" 4
echo "1..$n"
echo "$failed of $n tests failed"
exit "$failed"
