"""catalog: an HTTP service on 127.0.0.1:$CATALOG_PORT that takes a while to
start. It builds its data (CATALOG_WARMUP seconds, standing in for loading
files or warming caches), binds its port, and only then tells podvisor that
it is ready, by writing a newline to file descriptor 3: the s6 readiness
protocol, `ready: {notify: fd:3}` in procs.yaml.
"""

import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

READY_FD = 3


class Handler(BaseHTTPRequestHandler):
    items = []

    def do_GET(self):
        data = "".join(item + "\n" for item in self.items).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        print("catalog: " + format % args)


def main():
    port = int(os.environ["CATALOG_PORT"])
    print("catalog: building the catalog")
    time.sleep(float(os.environ.get("CATALOG_WARMUP", "2")))
    Handler.items = [f"item-{i}" for i in range(1, 43)]
    server = HTTPServer(("127.0.0.1", port), Handler)  # listening from here on
    # Ready: one newline, then close, so the fd is not inherited or reused.
    os.write(READY_FD, b"\n")
    os.close(READY_FD)
    print(f"catalog: serving {len(Handler.items)} items on 127.0.0.1:{port}")
    server.serve_forever()


if __name__ == "__main__":
    main()
