#!/bin/sh
# podvisor's VmRSS with 200 processes, with and without output tails, quiet
# and chatty (each writes 1,000 lines of 300 bytes, then sleeps).
# Usage: bench/tail-rss.sh   (builds podvisor into a temporary directory)
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/podvisor" ./cmd/podvisor
for kind in quiet chatty; do
	for tail in 0 200; do
		{
			printf 'listen: "off"\ncontrol: "off"\nlog: {tail: %s}\nprocesses:\n' "$tail"
			i=0
			while [ $i -lt 200 ]; do
				if [ $kind = quiet ]; then
					printf '  p%d: {command: [sleep, "1000"]}\n' $i
				else
					printf '  p%d: {command: "i=0; while [ $$i -lt 1000 ]; do printf %%0300d\\\\\\\\n $$i; i=$$((i+1)); done; exec sleep 1000"}\n' $i
				fi
				i=$((i + 1))
			done
		} >"$dir/procs.yaml"
		"$dir/podvisor" run -c "$dir/procs.yaml" >/dev/null 2>&1 &
		pid=$!
		sleep 8
		echo "$kind tail=$tail $(grep VmRSS /proc/$pid/status)"
		kill $pid
		wait $pid || true
	done
done
