#!/usr/bin/env python3
"""Test HTTP server for the executor's HTTP engine (python3 stdlib only).

Listens on 127.0.0.1 at a free port and prints that port on stdout, one
line, once it accepts connections.  Every request it receives is appended
to the --log file as one JSON line: method, raw path, headers (in order),
body, and the client's port (one port = one TCP connection).  Bytes that
are not UTF-8 are shown as \\xNN escapes.

With --accepts FILE it also appends one JSON line per accepted TCP
connection, {"peer_port": N}, written by the accepting loop before the
connection's thread starts: connections are logged in the order the
kernel queued them, so once a later connection has been answered, every
earlier one is in FILE (proc_lib.Recorder counts "nothing arrived" so).

With --tls DIR it speaks HTTPS with a fresh self-signed certificate for
"api.test" and 127.0.0.1 (made with the openssl command line), written to DIR/cert.pem
for the test to trust.

Behaviour is chosen by path:
  /big/N                 200 with N bytes of body
  /status/CODE           that status, a short body
  /slow/MS               waits MS milliseconds, then 200
  /hold/NAME[/...]       waits until /release/NAME is asked (at most 120 s),
                         then 200: a held request ends on an event, not a
                         guessed duration
  /release/NAME          lets every request held on NAME go, now and later
  /retry-after/V/TAG[/N] first N (default 1) requests for TAG: 503 with
                         Retry-After V ("dateN": an HTTP-date N seconds
                         ahead); then 200
  /redirect/CODE?to=URL  CODE with Location: URL (percent-decoded)
  /loop                  302 with Location: the same path, for ever
  /close                 reads the request and its body, closes without answer
  anything else          200 "ok"
"""
import argparse
import email.utils
import http.server
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse


def text(raw):
    return raw.decode("utf-8", "backslashreplace")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY the
    # second waits for the client's delayed ACK (40 ms a request).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def record(self, body):
        entry = {
            "method": self.command,
            "path": text(self.path.encode("latin-1")),
            "headers": [[k, text(v.encode("latin-1"))]
                        for k, v in self.headers.items()],
            "body": text(body),
            "peer_port": self.client_address[1],
        }
        with self.server.log_lock:
            self.server.log.write(json.dumps(entry) + "\n")
            self.server.log.flush()

    def reply(self, code, body=b"ok\n", headers=()):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_big(self, n):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        chunk = b"0123456789abcdef" * 4096
        while n > 0:
            part = chunk[:min(n, len(chunk))]
            self.wfile.write(part)
            n -= len(part)

    def retry_after(self, value, tag, busy):
        with self.server.log_lock:
            count = self.server.seen.get(tag, 0)
            self.server.seen[tag] = count + 1
        if count >= busy:
            self.reply(200, b"done\n")
            return
        if value.startswith("date"):
            when = time.time() + int(value[4:])
            value = email.utils.formatdate(when, usegmt=True)
        self.reply(503, b"busy\n", [("Retry-After", value)])

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        self.record(body)
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.split("/")
        route = parts[1] if len(parts) > 1 else ""
        if route == "big":
            self.send_big(int(parts[2]))
        elif route == "status":
            self.reply(int(parts[2]), b"status\n")
        elif route == "slow":
            time.sleep(int(parts[2]) / 1000.0)
            self.reply(200, b"late\n")
        elif route == "hold":
            self.server.gate(parts[2]).wait(120)
            self.reply(200, b"released\n")
        elif route == "release":
            self.server.gate(parts[2]).set()
            self.reply(200)
        elif route == "retry-after":
            busy = int(parts[4]) if len(parts) > 4 else 1
            self.retry_after(parts[2], parts[3], busy)
        elif route == "redirect":
            to = urllib.parse.parse_qs(url.query).get("to", ["/"])[0]
            self.reply(int(parts[2]), b"moved\n", [("Location", to)])
        elif route == "loop":
            self.reply(302, b"again\n", [("Location", self.path)])
        elif route == "close":
            self.close_connection = True
        else:
            self.reply(200)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 drops SYNs when 16 requests connect at once,
    # and a dropped SYN costs a 1 s retransmission.
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # a client refusing the certificate is part of the tests

    def gate(self, name):
        with self.log_lock:
            return self.gates.setdefault(name, threading.Event())

    def process_request(self, request, client_address):
        if self.accepts is not None:
            with self.log_lock:
                self.accepts.write(json.dumps(
                    {"peer_port": client_address[1]}) + "\n")
                self.accepts.flush()
        super().process_request(request, client_address)


def tls_context(directory):
    cert = os.path.join(directory, "cert.pem")
    key = os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec",
         "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=api.test",
         # 127.0.0.1 too: sp mcp's tests cannot map api.test in the
         # executor, which resolves names itself.
         "-addext", "subjectAltName=DNS:api.test,IP:127.0.0.1"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", metavar="DIR",
                    help="serve HTTPS with a self-signed cert written to DIR")
    ap.add_argument("--accepts", metavar="FILE",
                    help="log every accepted connection to FILE")
    ap.add_argument("--lifetime", type=float, default=60.0,
                    help="exit after this many seconds whatever happens")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    if args.tls:
        srv.socket = tls_context(args.tls).wrap_socket(srv.socket,
                                                       server_side=True)
    srv.log = open(args.log, "a", encoding="utf-8")
    srv.log_lock = threading.Lock()
    srv.accepts = open(args.accepts, "a") if args.accepts else None
    srv.seen = {}
    srv.gates = {}
    timer = threading.Timer(args.lifetime, srv.shutdown)
    timer.daemon = True
    timer.start()
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
