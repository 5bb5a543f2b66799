#!/usr/bin/env python3
"""A daemon that speaks sd_notify with a watchdog, for podvisor's e2e tests.

It sends READY=1 and STATUS=pinging, then WATCHDOG=1 every half interval
(WATCHDOG_USEC) PINGS times, then STATUS=hung and stops pinging. When the
stop signal comes it appends to $E2E_DIR/watchdog.txt how long after its
deadline (last ping + WATCHDOG_USEC) the SIGTERM arrived, in microseconds,
and exits. It also records the WATCHDOG_USEC it was given. A SIGTERM before
it stopped pinging (a start or a sleep slowed past the interval by a busy
machine) is not what the test measures: it exits without a record.
"""
import os
import signal
import socket
import sys
import time

addr = os.environ["NOTIFY_SOCKET"]
usec = int(os.environ["WATCHDOG_USEC"])
out = os.path.join(os.environ["E2E_DIR"], "watchdog.txt")
pings = int(sys.argv[1])

last = time.monotonic()
hung = False


def term(signum, frame):
    if not hung:
        sys.exit(0)
    late = (time.monotonic() - last) * 1e6 - usec
    with open(out, "a") as f:
        f.write(f"usec={usec} late_us={late:.0f}\n")
    sys.exit(0)


signal.signal(signal.SIGTERM, term)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(addr)
s.send(b"READY=1\nSTATUS=pinging")
for _ in range(pings):
    s.send(b"WATCHDOG=1")
    last = time.monotonic()
    time.sleep(usec / 2e6)
hung = True
s.send(b"STATUS=hung")
while True:
    signal.pause()
