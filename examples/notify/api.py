"""api: the dependent. It needs the cache (Redis) and the catalog from its
first instant: it reads both at start and exits 1 if either is missing, so it
would crash-loop if podvisor started it before they said they were ready.
Then it serves a summary on 127.0.0.1:$API_PORT.
"""

import os
import socket
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer


def redis_ping(port):
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b"PING\r\n")
        return s.makefile("rb").readline().decode().strip().lstrip("+")


def main():
    try:
        pong = redis_ping(int(os.environ["CACHE_PORT"]))
        url = f"http://127.0.0.1:{os.environ['CATALOG_PORT']}/"
        items = urllib.request.urlopen(url, timeout=2).read().decode().split()
    except OSError as e:
        print(f"api: a dependency is not there: {e}")
        sys.exit(1)
    summary = f"cache says {pong}, catalog has {len(items)} items"
    print(f"api: started: {summary}")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            data = (summary + "\n").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):
            pass

    HTTPServer(("127.0.0.1", int(os.environ["API_PORT"])), Handler).serve_forever()


if __name__ == "__main__":
    main()
