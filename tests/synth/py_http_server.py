# SPDX-License-Identifier: MIT
"""A thread-per-connection HTTP/1.1 server in Python's standard library
(ThreadingHTTPServer: the main thread waits in a selector and accepts,
each connection gets a thread), as a real interpreted service. It leaves
Nagle on, as StreamRequestHandler does by default, and writes each
response as two sends (headers, then body): with delayed ACKs a client
waits about 40 ms per request on a keep-alive connection.

    python3 py_http_server.py PORT [BODY_BYTES]"""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def handler(body):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def do_GET(self):
            self.send_response(200)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    return Handler


def main():
    port = int(sys.argv[1])
    body = b'x' * (int(sys.argv[2]) if len(sys.argv) > 2 else 512)
    ThreadingHTTPServer(('127.0.0.1', port), handler(body)).serve_forever()


if __name__ == '__main__':
    main()
