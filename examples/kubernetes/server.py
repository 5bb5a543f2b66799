#!/usr/bin/env python3
"""The app of pod-entrypoint.yaml: /app/server --listen HOST:PORT.

GET /healthz answers "ok", every other path a greeting. On SIGTERM it
finishes the requests in flight and exits 0.
"""

import argparse
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok\n" if self.path == "/healthz" else b"hello from the app behind nginx\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", default="127.0.0.1:9000")
    host, port = parser.parse_args().listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = False  # server_close() waits for requests in flight
    signal.signal(signal.SIGTERM, lambda signum, frame: threading.Thread(target=server.shutdown).start())
    print(f"app: listening on {host}:{port}", flush=True)
    server.serve_forever()
    server.server_close()
    print("app: stopped", flush=True)


if __name__ == "__main__":
    main()
