"""The app behind the nginx sidecar: a small HTTP server on 127.0.0.1:$APP_PORT.

GET /healthz answers "ok" (podvisor's readiness check); GET /slow?seconds=N
answers after N seconds, to watch a graceful stop; any other path answers a
greeting. On SIGTERM it stops accepting connections, finishes the requests in
flight and exits 0.
"""

import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so no idle keep-alive connection
    # can hold up the graceful stop.
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/healthz":
            self.answer("ok\n")
            return
        via = self.headers.get("X-Forwarded-For", "-")
        print(f"app: GET {self.path} (forwarded for {via})")
        if url.path == "/slow":
            time.sleep(float(parse_qs(url.query).get("seconds", ["1"])[0]))
        self.answer(f"hello from app, pid {os.getpid()}\n")

    def answer(self, body):
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # do_GET logs requests; health checks are not worth a line


class Server(ThreadingHTTPServer):
    # Non-daemon request threads: server_close() waits for them to finish.
    daemon_threads = False


def main():
    port = int(os.environ.get("APP_PORT", "8081"))
    server = Server(("127.0.0.1", port), Handler)
    # shutdown() waits for serve_forever() to return, so it cannot run in the
    # signal handler, which interrupts serve_forever() itself.
    signal.signal(signal.SIGTERM, lambda signum, frame: threading.Thread(target=server.shutdown).start())
    print(f"app: listening on 127.0.0.1:{port}")
    server.serve_forever()
    print("app: SIGTERM: finishing the requests in flight")
    server.server_close()
    print("app: stopped")


if __name__ == "__main__":
    main()
