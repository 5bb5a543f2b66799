"""Log shipper sidecar: tails $SPOOL and ships its lines in batches to $SHIP_TO,
a file standing in for a remote log collector.

A batch goes out SHIP_INTERVAL seconds after its first line was read. On
SIGTERM the shipper reads the spool to its end, ships what is left and exits
0: nothing written before the stop is lost, which is why podvisor must stop it
after the steps that write the spool, not before.
"""

import os
import signal
import time

POLL = 0.1  # seconds between reads of the spool

stopping = False


def on_term(signum, frame):
    global stopping
    stopping = True
    # Said at once (a raw write is safe in a handler), so the log shows when
    # the stop came, relative to the steps' exits.
    os.write(1, b"shipper: SIGTERM: shipping what is left\n")


def ship(dest, lines, number):
    # One write per batch, synced: a collector receives whole batches.
    with open(dest, "ab") as out:
        out.write(b"".join(lines))
        out.flush()
        os.fsync(out.fileno())
    print(f"shipper: shipped batch {number}: {len(lines)} lines")


def main():
    spool = os.environ["SPOOL"]
    dest = os.environ["SHIP_TO"]
    interval = float(os.environ.get("SHIP_INTERVAL", "2"))
    signal.signal(signal.SIGTERM, on_term)

    os.makedirs(os.path.dirname(spool), exist_ok=True)
    src = open(spool, "ab+")
    src.seek(0, os.SEEK_END)  # like tail -F: earlier runs were shipped already
    print(f"shipper: watching {spool}")

    partial = b""  # the start of a line whose newline has not been written yet
    batch, due = [], None
    batches = shipped = 0
    while True:
        done = stopping  # read before the last read: then nothing is missed
        data = partial + src.read()
        lines = data.split(b"\n")
        partial = lines.pop()
        if done and partial:
            lines.append(partial)  # a last line without its newline still counts
            partial = b""
        if lines:
            batch.extend(line + b"\n" for line in lines)
            if due is None:
                due = time.monotonic() + interval
        if batch and (done or time.monotonic() >= due):
            batches += 1
            shipped += len(batch)
            ship(dest, batch, batches)
            batch, due = [], None
        if done:
            print(f"shipper: SIGTERM: flushed, {shipped} lines in {batches} batches")
            return
        time.sleep(POLL)


if __name__ == "__main__":
    main()
