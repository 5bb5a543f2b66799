"""The app of the fat container: an HTTP server on $APP_BIND:$APP_PORT that
counts visits in Redis and reads its greeting from PostgreSQL.

GET /healthz answers "ok" (readiness and liveness check: it says the app
itself answers, not that its databases do); GET / answers the greeting and
the visit count. On SIGTERM it finishes the requests in flight and exits 0.
"""

import os
import signal
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = os.environ["STATE"]
PG_PORT = os.environ["PG_PORT"]
REDIS_PORT = int(os.environ["REDIS_PORT"])


def redis(*args):
    """Sends one command to Redis and returns its integer or string reply."""
    req = f"*{len(args)}\r\n".encode()
    for a in args:
        a = str(a).encode()
        req += b"$%d\r\n%s\r\n" % (len(a), a)
    with socket.create_connection(("127.0.0.1", REDIS_PORT), timeout=2) as s:
        s.sendall(req)
        reply = s.makefile("rb").readline().decode().rstrip("\r\n")
    kind, value = reply[:1], reply[1:]
    if kind == ":":
        return int(value)
    if kind == "+":
        return value
    raise RuntimeError(f"redis: {reply}")


def greeting():
    # psql keeps the example free of database drivers; a real app would
    # hold a connection pool.
    out = subprocess.run(
        [f"{STATE}/pgbin/psql", "-X", "-At", "-h", "127.0.0.1", "-p", PG_PORT, "-U", "postgres",
         "-c", "SELECT text FROM greetings WHERE id = 1"],
        capture_output=True, text=True, timeout=5, check=True)
    return out.stdout.strip()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection

    def do_GET(self):
        if self.path == "/healthz":
            self.answer(200, "ok\n")
            return
        try:
            body = f"{greeting()} (visit {redis('INCR', 'visits')})\n"
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            print(f"app: GET {self.path}: {e}")
            self.answer(503, "database unavailable\n")
            return
        print(f"app: GET {self.path}: {body.strip()}")
        self.answer(200, body)

    def answer(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # do_GET logs what matters


class Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() waits for requests in flight


def main():
    host = os.environ.get("APP_BIND", "127.0.0.1")  # 0.0.0.0 in a container image
    port = int(os.environ["APP_PORT"])
    server = Server((host, port), Handler)
    # shutdown() waits for serve_forever(), which the handler interrupts.
    signal.signal(signal.SIGTERM, lambda signum, frame: threading.Thread(target=server.shutdown).start())
    print(f"app: listening on {host}:{port}, redis says {redis('PING')}")
    server.serve_forever()
    print("app: SIGTERM: finishing the requests in flight")
    server.server_close()
    print("app: stopped")


if __name__ == "__main__":
    main()
