"""Tiny HTTP server for podvisor's end-to-end health tests.

usage: health_server.py PORT [--delay S] [--hang-after S --marker PATH]

--delay S       sleep S seconds before binding the port (slow start).
--hang-after S  on the first run only (PATH absent; it is then created), stop
                answering S seconds after binding: connections are still
                accepted by the kernel but every request hangs, as a wedged
                server's would. Later runs (PATH present) answer forever.

Every request to any path gets 200 "ok". Nothing is printed per request, so
the output stays quiet; the server prints one "listening" line once bound.
"""

import argparse
import http.server
import os
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--hang-after", type=float, default=0)
    ap.add_argument("--marker", default="")
    args = ap.parse_args()

    hang = threading.Event()
    if args.hang_after > 0:
        if args.marker and os.path.exists(args.marker):
            args.hang_after = 0
        elif args.marker:
            open(args.marker, "a").close()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if hang.is_set():
                time.sleep(1e9)
            body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    time.sleep(args.delay)
    srv = http.server.HTTPServer(("127.0.0.1", args.port), Handler)
    print("listening on", args.port, flush=True)
    if args.hang_after > 0:
        threading.Timer(args.hang_after, hang.set).start()
    srv.serve_forever()


main()
