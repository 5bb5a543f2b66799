#!/bin/sh
# What the Kubernetes bridge costs `podvisor run`, and what k8s.io/api would
# have cost (docs/BENCHMARKS.md, "Kubernetes bridge").
#
#   bench/kube-cost.sh [BASE_COMMIT]
#
# 1. podvisor built at HEAD and at BASE_COMMIT (default: the commit before
#    internal/kube appeared): binary size, VmRSS of `podvisor run` one second
#    after start (one sleeping process, --listen off), and the wall time of
#    200 `podvisor version` runs.
# 2. A scratch module: a program that only prints its VmRSS, built with and
#    without an import of k8s.io/api/core/v1 (needs the Go module proxy).
set -eu
base=${1:-$(git log --format=%H --diff-filter=A -- internal/kube/types.go | tail -1)^}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build_at() { # COMMIT OUT
	mkdir -p "$tmp/src-$2"
	git archive "$1" | tar -x -C "$tmp/src-$2"
	(cd "$tmp/src-$2" && go build -o "$tmp/$2" ./cmd/podvisor)
}
rss_run() { # BIN
	printf 'processes:\n  s: {command: [sleep, "30"]}\n' > "$tmp/procs.yaml"
	"$1" run -c "$tmp/procs.yaml" --listen off > /dev/null 2>&1 &
	pid=$!
	sleep 1
	awk '/VmRSS/ {print $2 " kB"}' "/proc/$pid/status"
	kill -TERM "$pid"
	wait "$pid" || true
}
time_version() { # BIN
	start=$(date +%s%N)
	i=0
	while [ $i -lt 200 ]; do "$1" version > /dev/null; i=$((i + 1)); done
	echo "$(( ($(date +%s%N) - start) / 200000 )) us/run"
}

build_at "$base" base
build_at HEAD head
for b in base head; do
	echo "podvisor $b: $(stat -c %s "$tmp/$b") bytes, run RSS $(rss_run "$tmp/$b"), version $(time_version "$tmp/$b")"
done

mkdir -p "$tmp/k8s/plain" "$tmp/k8s/api"
cat > "$tmp/k8s/plain/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") {
			fmt.Println(strings.Join(strings.Fields(l)[1:], " "))
		}
	}
}
GO
sed -e 's|"strings"|"strings"\n\n\tcorev1 "k8s.io/api/core/v1"|' \
    -e 's|^func main() {|var _ corev1.Pod\n\nfunc main() {|' "$tmp/k8s/plain/main.go" > "$tmp/k8s/api/main.go"
for m in plain api; do
	(cd "$tmp/k8s/$m" && go mod init example.com/m > /dev/null 2>&1 &&
		{ [ $m = plain ] || go get k8s.io/api/core/v1@latest > /dev/null 2>&1; } && go build -o "$tmp/$m" .)
	echo "program $m: $(stat -c %s "$tmp/$m") bytes, RSS at start $("$tmp/$m"), start $(time_version "$tmp/$m")"
done
