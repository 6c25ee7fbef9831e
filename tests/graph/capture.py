# SPDX-License-Identifier: MIT
"""A span sink for tests: a threaded HTTP server on 127.0.0.1 keeping every
POSTed body with its path and content type, so Zipkin and OTLP/HTTP exports
can be checked without a collector. It answers 202 to Zipkin's
/api/v2/spans and 200 (an empty OTLP response) to anything else."""

import http.server
import json
import random
import socketserver
import threading
import time
from collections import namedtuple

Post = namedtuple('Post', 'path content_type body')

# Ports of the graph tests, below the kernel's ephemeral range (32768-):
# no outgoing connection takes one meanwhile.
PORT_FIRST, PORT_LAST = 29500, 32000


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class _Handler(http.server.BaseHTTPRequestHandler):
    # Exporters keep their connection open between batches.
    protocol_version = 'HTTP/1.1'

    def _body(self):
        # node's http client sends a body of unknown length chunked.
        if 'chunked' in self.headers.get('Transfer-Encoding', '').lower():
            body = b''
            while True:
                size = int(self.rfile.readline().split(b';')[0].strip(), 16)
                chunk = self.rfile.read(size + 2)  # the data and its CRLF
                if size == 0:
                    # A last chunk's trailer lines end with an empty line.
                    while chunk not in (b'\r\n', b'\n', b''):
                        chunk = self.rfile.readline()
                    return body
                body += chunk[:size]
        return self.rfile.read(int(self.headers.get('Content-Length') or 0))

    def do_POST(self):
        body = self._body()
        self.server.capture._add(Post(self.path, self.headers.get('Content-Type', ''), body))
        # A JSON or protobuf OTLP response with no partial success is empty.
        status = 202 if self.path.startswith('/api/v2/spans') else 200
        self.send_response(status)
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, fmt, *args):
        pass


class Capture:
    """with Capture() as cap: ... cap.url('/api/v2/spans') ... cap.posts()"""

    def __init__(self):
        self._lock = threading.Lock()
        self._posts = []
        self._server = None
        self._thread = None
        self.port = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        # Binding is the check that the port is free; try a few.
        for _ in range(100):
            port = random.randint(PORT_FIRST, PORT_LAST)
            try:
                self._server = _Server(('127.0.0.1', port), _Handler)
                break
            except OSError:
                continue
        else:
            raise RuntimeError('capture: no free port in %d..%d' % (PORT_FIRST, PORT_LAST))
        self._server.capture = self
        self.port = port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def url(self, path):
        return 'http://127.0.0.1:%d%s' % (self.port, path)

    def _add(self, post):
        with self._lock:
            self._posts.append(post)

    def posts(self, path=None):
        """The bodies received so far (of one path, if given), in order."""
        with self._lock:
            return [p for p in self._posts if path is None or p.path == path]

    def wait(self, path, count=1, timeout=10):
        """Wait until count bodies of path have arrived; returns them."""
        deadline = time.monotonic() + timeout
        while len(self.posts(path)) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.posts(path)

    def zipkin_spans(self, path='/api/v2/spans'):
        """Every Zipkin v2 span received on path: the JSON arrays, joined."""
        spans = []
        for p in self.posts(path):
            spans.extend(json.loads(p.body))
        return spans
