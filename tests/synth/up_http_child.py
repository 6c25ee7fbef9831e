# SPDX-License-Identifier: MIT
"""An HTTP/1.1 child for the client-side tests: a thread per connection,
each request answered after DELAY_MS in one send (TCP_NODELAY, so no
delayed-ACK wait shows in the parent's latency), its traceparent header
(or '-') appended as one line to LOG.

    python3 up_http_child.py PORT DELAY_MS LOG"""

import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def handler(delay, log, lock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def setup(self):
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def answer(self):
            n = int(self.headers.get('Content-Length') or 0)
            if n:
                self.rfile.read(n)
            with lock:
                log.write((self.headers.get('traceparent') or '-') + '\n')
                log.flush()
            if delay:
                time.sleep(delay)
            self.wfile.write(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
            self.wfile.flush()

        do_GET = answer
        do_POST = answer

        def log_message(self, *args):
            pass
    return Handler


def main():
    port, delay_ms, path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    with open(path, 'a') as log:
        srv = ThreadingHTTPServer(('127.0.0.1', port), handler(delay_ms / 1000, log,
                                                                threading.Lock()))
        srv.daemon_threads = True
        srv.serve_forever()


if __name__ == '__main__':
    main()
