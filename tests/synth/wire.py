# SPDX-License-Identifier: MIT
"""A minimal client of each wire framing the clone runtime speaks: one
request at a time, the whole response read and checked for well-formedness.
Used to drive clones of random models, whose framing no stock load
generator covers all of."""

import socket
import struct


class Conn:
    def __init__(self, port, timeout=10):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b''

    def close(self):
        self.s.close()

    def _fill(self):
        data = self.s.recv(65536)
        if not data:
            raise ConnectionError('connection closed by the server')
        self.buf += data

    def take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def line(self):
        while b'\r\n' not in self.buf:
            self._fill()
        i = self.buf.index(b'\r\n')
        out, self.buf = self.buf[:i], self.buf[i + 2:]
        return out


def _resp_reply(c):
    head = c.line()
    kind, rest = head[:1], head[1:]
    if kind in (b'+', b':'):
        return len(head) + 2
    if kind == b'-':
        raise AssertionError('RESP error reply: %r' % head)
    if kind == b'$':
        n = int(rest)
        return len(head) + 2 + (len(c.take(n + 2)) if n >= 0 else 0)
    if kind == b'*':
        return len(head) + 2 + sum(_resp_reply(c) for _ in range(max(int(rest), 0)))
    raise AssertionError('not a RESP reply: %r' % head)


def resp(c, i):
    key = b'key:%d' % i
    c.s.sendall(b'*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n' % (len(key), key))
    return _resp_reply(c)


def memcache_text(c, i):
    if i % 4 == 0:
        c.s.sendall(b'set k%d 0 0 5\r\nhello\r\n' % i)
        line = c.line()
        assert line == b'STORED', line
        return len(line) + 2
    c.s.sendall(b'get k%d\r\n' % i)
    total = 0
    while True:
        line = c.line()
        total += len(line) + 2
        if line == b'END':
            return total
        parts = line.split()
        assert parts[0] == b'VALUE' and parts[1] == b'k%d' % i, line
        total += len(c.take(int(parts[3]) + 2))


def memcache_binary(c, i):
    key = b'k%d' % i
    c.s.sendall(struct.pack('>BBHBBHIIQ', 0x80, 0x00, len(key), 0, 0, 0, len(key), i, 0) + key)
    head = c.take(24)
    magic, op, _, _, _, status, body, opaque, _ = struct.unpack('>BBHBBHIIQ', head)
    assert magic == 0x81 and op == 0 and opaque == i, head
    return 24 + len(c.take(body))


def http1(c, i):
    c.s.sendall(b'GET /%d HTTP/1.1\r\nHost: clone\r\n\r\n' % i)
    status = c.line()
    assert status.startswith(b'HTTP/1.1 200'), status
    length, total = 0, len(status) + 2
    while True:
        line = c.line()
        total += len(line) + 2
        if not line:
            break
        name, _, value = line.partition(b':')
        if name.strip().lower() == b'content-length':
            length = int(value)
    return total + len(c.take(length))


def length_prefixed(c, i):
    payload = b'x' * (16 + i % 64)
    c.s.sendall(struct.pack('>I', len(payload)) + payload)
    (n,) = struct.unpack('>I', c.take(4))
    return 4 + len(c.take(n))


def raw(c, i):
    """Raw framing has no boundaries: one request, then whatever arrives
    first is taken as its answer."""
    c.s.sendall(b'request %d\n' % i)
    if not c.buf:
        c._fill()
    n, c.buf = len(c.buf), b''
    return n


CLIENTS = {'resp': resp, 'memcache-text': memcache_text, 'memcache-binary': memcache_binary,
           'http1': http1, 'length-prefixed': length_prefixed, 'raw': raw, 'unknown': raw}


def drive(port, framing, requests, connections=2):
    """Send requests over connections (round robin); returns response bytes."""
    client = CLIENTS[framing]
    conns = [Conn(port) for _ in range(connections)]
    try:
        return sum(client(conns[i % connections], i) for i in range(requests))
    finally:
        for c in conns:
            c.close()
