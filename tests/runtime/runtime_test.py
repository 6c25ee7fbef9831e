#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runtime test: start one clone built from lib/runtime on a free port,
drive it with its real client (redis-benchmark, memcaslap, wrk, pgbench, or the
small clients below), stop it with SIGTERM while a client is still
connected, and check its exit status (0), its one "ready" line and that no
scratch file is left; then once more with only --max-seconds to stop it. The replay scenario counts the replayed system calls
under strace instead.
  runtime_test.py CLONE SCENARIO [THREADS [CHILDREN]]
SCENARIO: resp, mctext, mcbin, http, pg, lp, raw, replay, order, order-held, wake, wake-none
(the reads and writes of one wake-up, under strace), paced (background
wake-ups under valgrind, by served requests), turns (THREADS threads on a
shared socket take one connection each, under strace), fdcap (far more
idle connections than the fd limit allows); http-spread also
checks that every thread but the main one served. THREADS: the number of
threads the clone's process should run; CHILDREN: processes it forks."""

import collections
import os
import random
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

failures = []
READY_S = 15
STOP_S = 10


def fail(msg):
    print('FAIL: ' + msg, flush=True)
    failures.append(msg)


def scratch_parent():
    return '/dev/shm' if os.path.isdir('/dev/shm') else None


class Clone:
    """A clone process on a random free port (exit status 3: port taken)."""

    def __init__(self, exe, extra=(), wrap=(), env=None):
        self.exe = exe
        self.scratch = tempfile.mkdtemp(prefix='rt-scratch-', dir=scratch_parent())
        self.err = tempfile.TemporaryFile()
        for _ in range(10):
            self.port = random.randint(20000, 59999)
            argv = list(wrap) + [exe, '--port', str(self.port), '--max-seconds', '60',
                                 '--scratch', self.scratch] + list(extra)
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.err, env=env)
            if self.wait_ready():
                return
            if self.proc.returncode != 3:
                raise RuntimeError('%s: no "ready" (exit status %s): %s' %
                                   (exe, self.proc.returncode, self.stderr()))
        raise RuntimeError('%s: no free port in 10 tries' % exe)

    def wait_ready(self):
        deadline = time.time() + READY_S
        line = b''
        while time.time() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if r:
                c = os.read(self.proc.stdout.fileno(), 1)
                if not c:
                    self.proc.wait()
                    return False
                line += c
                if line == b'ready\n':
                    return True
            elif self.proc.poll() is not None:
                return False
        self.proc.kill()
        self.proc.wait()
        raise RuntimeError('%s: no "ready" within %d s' % (self.exe, READY_S))

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors='replace').strip()

    def threads(self):
        return len(os.listdir('/proc/%d/task' % self.proc.pid))

    def children(self):
        with open('/proc/%d/task/%d/children' % (self.proc.pid, self.proc.pid)) as f:
            return len(f.read().split())

    def finish(self, what, timeout):
        """Waits for the exit; checks status 0, one "ready", no scratch file."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            fail('%s: still running %d s after %s' % (self.exe, timeout, what))
            self.proc.kill()
            rc = self.proc.wait()
        rest = self.proc.stdout.read()
        if rc != 0:
            fail('%s: exit status %d after %s: %s' % (self.exe, rc, what, self.stderr()))
        if rest:
            fail('%s: more output after "ready": %r' % (self.exe, rest[:200]))
        left = os.listdir(self.scratch)
        if left:
            fail('%s: scratch files left: %s' % (self.exe, left))
            for f in left:
                os.unlink(os.path.join(self.scratch, f))
        os.rmdir(self.scratch)

    def stop(self):
        """SIGTERM while a client is connected and one request is partial."""
        idle = self.connect()
        partial = self.connect()
        partial.sendall(b'\x00')
        time.sleep(0.1)
        self.proc.send_signal(signal.SIGTERM)
        self.finish('SIGTERM', STOP_S)
        idle.close()
        partial.close()

    def connect(self):
        s = socket.create_connection(('127.0.0.1', self.port), timeout=10)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError('closed after %d of %d bytes' % (len(buf), n))
        buf += chunk
    return bytes(buf)


def recv_until(s, sep):
    buf = bytearray()
    while not buf.endswith(sep):
        c = s.recv(1)
        if not c:
            raise ConnectionError('closed before %r' % sep)
        buf += c
    return bytes(buf)


def closed(s):
    """Does the peer close the connection (within 5 s)?"""
    s.settimeout(5)
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def run_tool(argv, timeout=60):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    out = p.stdout.decode(errors='replace').replace('\r', '\n')
    return p.returncode, out


def thread_cpu(clone):
    """{tid: user + system ticks} of the clone's threads."""
    ticks = {}
    for tid in os.listdir('/proc/%d/task' % clone.proc.pid):
        with open('/proc/%d/task/%s/stat' % (clone.proc.pid, tid)) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        ticks[int(tid)] = int(fields[11]) + int(fields[12])
    return ticks


def check_spread(clone):
    """Every serving thread (all but the main one here) got work."""
    idle = [tid for tid, t in thread_cpu(clone).items() if tid != clone.proc.pid and t == 0]
    if idle:
        fail('%s: threads %s served nothing: connections not spread' % (clone.exe, idle))


def check_threads(clone, want):
    if want is not None and clone.threads() != want:
        fail('%s: %d threads, expected %d' % (clone.exe, clone.threads(), want))


# ---- length-prefixed and raw ----

def lp_request(s, payload):
    s.sendall(struct.pack('>I', len(payload)) + payload)
    return lp_response(s)


def lp_response(s):
    n = struct.unpack('>I', recv_exact(s, 4))[0]
    if n > 16 << 20:
        raise ValueError('response of %d bytes' % n)
    recv_exact(s, n)
    return n + 4


def lp_client(clone, n, errors):
    try:
        s = clone.connect()
        for i in range(n):
            lp_request(s, b'q' * (i % 300))
        s.close()
    except Exception as e:  # reported by the caller
        errors.append(repr(e))


def parallel_clients(clone, conns, n, what):
    """conns clients at once, n requests each; their errors fail `what`."""
    errors = []
    ts = [threading.Thread(target=lp_client, args=(clone, n, errors)) for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for e in errors:
        fail('%s: client: %s' % (what, e))


def scenario_lp(clone):
    s = clone.connect()
    sizes = [lp_request(s, b'hello') for _ in range(200)]
    if min(sizes) < 4 or max(sizes) > 16 << 20:
        fail('lp: response sizes out of range: %d..%d' % (min(sizes), max(sizes)))
    # pipelined: 64 requests in one send, answered in order
    s.sendall(b''.join(struct.pack('>I', 3) + b'abc' for _ in range(64)))
    for _ in range(64):
        lp_response(s)
    # one request byte by byte, then a 1 MiB one
    msg = struct.pack('>I', 10) + b'0123456789'
    for b in msg:
        s.send(bytes([b]))
        time.sleep(0.001)
    lp_response(s)
    lp_request(s, b'z' * (1 << 20))
    parallel_clients(clone, 4, 300, 'lp')
    # malformed: a length above 64 MiB closes that connection only
    bad = clone.connect()
    bad.sendall(struct.pack('>I', 0xffffffff) + b'x')
    if not closed(bad):
        fail('lp: a 4 GiB length did not close the connection')
    lp_request(s, b'still there')
    s.close()


def scenario_raw(clone):
    s = clone.connect()
    for _ in range(200):
        s.sendall(b'x' * 10)
        recv_exact(s, 100)  # CFG_RESP_FIXED=100
    s.close()
    errors = []

    def client():
        try:
            c = clone.connect()
            for _ in range(200):
                c.sendall(b'ping')
                recv_exact(c, 100)
            c.close()
        except Exception as e:
            errors.append(repr(e))
    ts = [threading.Thread(target=client) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for e in errors:
        fail('raw: client: ' + e)


# ---- redis ----

def resp_reply(s):
    line = recv_until(s, b'\r\n')
    if line[:1] == b'$':
        n = int(line[1:-2])
        return line + (recv_exact(s, n + 2) if n >= 0 else b'')
    if line[:1] == b'*':
        return line + b''.join(resp_reply(s) for _ in range(int(line[1:-2])))
    return line


def scenario_resp(clone):
    for extra in ([], ['-P', '16']):
        rc, out = run_tool(['redis-benchmark', '-h', '127.0.0.1', '-p', str(clone.port), '-n', '20000',
                            '-c', '10', '-t', 'get,set,incr,lpush', '-q'] + extra)
        bad = [l for l in out.split('\n') if re.search(r'warn|err|fail', l, re.I)]
        done = re.findall(r'^(SET|GET|INCR|LPUSH): [0-9.]+ requests per second', out, re.M)
        if rc != 0 or bad or len(done) != 4:
            fail('redis-benchmark %s: status %d, %s, finished %s' % (' '.join(extra), rc, bad[:3], done))
    s = clone.connect()
    s.sendall(b'PING\r\n')
    if resp_reply(s) != b'+PONG\r\n':
        fail('resp: inline PING')
    s.sendall(b'*3\r\n$6\r\nconfig\r\n$3\r\nGET\r\n$10\r\nappendonly\r\n')
    if resp_reply(s) != b'*2\r\n$10\r\nappendonly\r\n$0\r\n\r\n':
        fail('resp: CONFIG GET')
    s.sendall(b'*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n' * 100)
    for _ in range(100):
        r = resp_reply(s)
        if r[:1] not in (b'$', b'+'):
            fail('resp: GET reply %r' % r[:40])
            break
    bad = clone.connect()
    bad.sendall(b'*1\r\n$x\r\n')
    if not closed(bad):
        fail('resp: a malformed bulk length did not close the connection')
    s.sendall(b'PING\r\n')
    resp_reply(s)
    s.close()


# ---- memcached ----

def memcaslap(clone, binary):
    argv = ['memcaslap', '-s', '127.0.0.1:%d' % clone.port, '-t', '3s', '-c', '8']
    rc, out = run_tool(argv + (['--binary'] if binary else []))
    bad = [l for l in out.split('\n') if re.search(r'error|fail|unexpect|timeout', l, re.I)]
    ops = re.search(r'Ops: (\d+)', out)
    if rc != 0 or bad or not ops or int(ops.group(1)) == 0:
        fail('memcaslap%s: status %d, %s, %s' % (' --binary' if binary else '', rc, bad[:3],
                                                  ops.group(0) if ops else 'no Ops line'))


def scenario_mctext(clone):
    memcaslap(clone, False)
    memcaslap(clone, True)
    s = clone.connect()
    s.sendall(b'get a bb ccc\r\n')
    keys = []
    while True:
        line = recv_until(s, b'\r\n')
        if line == b'END\r\n':
            break
        f = line.split()
        keys.append(f[1])
        recv_exact(s, int(f[3]) + 2)
    if keys != [b'a', b'bb', b'ccc']:
        fail('mctext: get keys %r' % keys)
    s.sendall(b'set k 0 0 5 noreply\r\nhello\r\nset k 0 0 2\r\nhi\r\n')
    if recv_until(s, b'\r\n') != b'STORED\r\n':
        fail('mctext: noreply then set')
    for cmd, want in ((b'delete k', b'DELETED'), (b'incr n 7', b'7'), (b'stats', b'END'),
                      (b'flush_all', b'OK'), (b'bogus', b'ERROR')):
        s.sendall(cmd + b'\r\n')
        got = recv_until(s, b'\r\n')
        if got != want + b'\r\n':
            fail('mctext: %r -> %r' % (cmd, got))
    s.sendall(b'version\r\n')
    if not recv_until(s, b'\r\n').startswith(b'VERSION '):
        fail('mctext: version')
    s.sendall(b'quit\r\n')
    if not closed(s):
        fail('mctext: quit did not close')


def mcbin_packet(op, key=b'', extras=b'', value=b'', opaque=0):
    body = extras + key + value
    return struct.pack('>BBHBBHIIQ', 0x80, op, len(key), len(extras), 0, 0, len(body), opaque, 0) + body


def mcbin_reply(s):
    h = recv_exact(s, 24)
    magic, op, klen, elen, _, status, blen, opaque, _ = struct.unpack('>BBHBBHIIQ', h)
    body = recv_exact(s, blen)
    return magic, op, status, opaque, body[elen:elen + klen], blen


def scenario_mcbin(clone):
    memcaslap(clone, True)
    memcaslap(clone, False)
    s = clone.connect()
    s.sendall(mcbin_packet(0x0c, b'mykey', opaque=77))
    magic, op, status, opaque, key, _ = mcbin_reply(s)
    if (magic, op, status, opaque, key) != (0x81, 0x0c, 0, 77, b'mykey'):
        fail('mcbin: GETK reply %r' % ((magic, op, status, opaque, key),))
    # a quiet set gets no reply: the NOOP's is the next one
    s.sendall(mcbin_packet(0x11, b'k', b'\0' * 8, b'value') + mcbin_packet(0x0a, opaque=5))
    _, op, _, opaque, _, _ = mcbin_reply(s)
    if (op, opaque) != (0x0a, 5):
        fail('mcbin: SETQ + NOOP gave op %#x opaque %d' % (op, opaque))
    s.sendall(mcbin_packet(0x07))
    if mcbin_reply(s)[1] != 0x07 or not closed(s):
        fail('mcbin: QUIT')
    bad = clone.connect()
    bad.sendall(b'\x80' + b'\0' * 7 + struct.pack('>I', 1 << 30) + b'\0' * 12)
    if not closed(bad):
        fail('mcbin: a 1 GiB body did not close the connection')


# ---- HTTP ----

def http_response(s):
    head = recv_until(s, b'\r\n\r\n')
    m = re.search(rb'Content-Length: (\d+)', head)
    recv_exact(s, int(m.group(1)))
    return head


def scenario_http(clone):
    rc, out = run_tool(['wrk', '-t2', '-c10', '-d3s', 'http://127.0.0.1:%d/' % clone.port])
    reqs = re.search(r'(\d+) requests in', out)
    if rc != 0 or 'Socket errors' in out or 'Non-2xx' in out or not reqs or int(reqs.group(1)) == 0:
        fail('wrk: status %d: %s' % (rc, out.strip()[-300:]))
    s = clone.connect()
    s.sendall(b'GET /a HTTP/1.1\r\nHost: x\r\n\r\n' * 3 +
              b'POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello')
    for _ in range(4):
        if not http_response(s).startswith(b'HTTP/1.1 200 OK\r\n'):
            fail('http: pipelined status line')
    s.sendall(b'GET / HTTP/1.1\r\nConnection: close\r\n\r\n')
    http_response(s)
    if not closed(s):
        fail('http: Connection: close did not close')
    s = clone.connect()
    s.sendall(b'GET / HTTP/1.0\r\n\r\n')
    http_response(s)
    if not closed(s):
        fail('http: HTTP/1.0 without keep-alive did not close')
    s = clone.connect()
    s.sendall(b'NONSENSE\r\n\r\n')
    if not closed(s):
        fail('http: a malformed request did not close')


# ---- PostgreSQL ----

def pgbench(clone, *args):
    argv = ['pgbench', '-h', '127.0.0.1', '-p', str(clone.port), '-U', 'clone', '-T', '2', '-c', '2']
    rc, out = run_tool(argv + list(args) + ['clone'])
    done = re.search(r'actually processed: (\d+)', out)
    failed = re.search(r'number of failed transactions: (\d+)', out)
    if rc != 0 or not done or int(done.group(1)) == 0 or not failed or int(failed.group(1)):
        fail('pgbench %s: status %d: %s' % (' '.join(args), rc, out.strip()[-300:]))


def pg_msg(kind, body=b''):
    return kind + struct.pack('>I', len(body) + 4) + body


def pg_startup(s):
    body = struct.pack('>I', 196608) + b'user\0clone\0\0'
    s.sendall(struct.pack('>I', len(body) + 4) + body)
    return pg_until(s, b'Z')


def pg_until(s, last):
    """The backend's messages up to one of type last: [(type, body)]."""
    msgs = []
    while not msgs or msgs[-1][0] != last:
        kind, n = struct.unpack('>cI', recv_exact(s, 5))
        msgs.append((kind, recv_exact(s, n - 4)))
    return msgs


def pg_hostile(clone):
    """Malformed messages close the connection; the clone serves on."""
    bad = [struct.pack('>II', 8, 131072),                      # protocol 2.0
           struct.pack('>II', 1 << 30, 196608),                # startup of 1 GiB
           struct.pack('>II', 4, 196608)]                      # length below its header
    after_startup = [pg_msg(b'Q', b'select 1'),                # no NUL
                     b'Q' + struct.pack('>I', 2),              # length below itself
                     pg_msg(b'F', b'\0' * 8),                  # function call
                     pg_msg(b'P', b'noterm') + pg_msg(b'S'),   # Parse without its strings
                     pg_msg(b'E', b'\0') + pg_msg(b'S'),       # Execute without its row limit
                     b'B' + struct.pack('>I', 0x7fffffff),     # a Bind of 2 GiB
                     # ~30 times its size in answers: over the 16 MiB cap
                     pg_msg(b'Q', (b'select ' + b',' * 63 + b'1;') * 9000 + b'\0')]
    for i, raw in enumerate(bad + after_startup):
        s = clone.connect()
        if i >= len(bad):
            pg_startup(s)
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            continue  # closed while it was still sending
        if not closed(s):
            fail('pg: malformed message %r did not close' % raw[:16])


def scenario_pg(clone):
    for args in (('-S',), (), ('-S', '-M', 'extended'), ('-M', 'prepared')):
        pgbench(clone, *args)
    s = clone.connect()
    s.sendall(struct.pack('>II', 8, 80877103))
    if recv_exact(s, 1) != b'N':
        fail('pg: SSLRequest not declined')
    kinds = [k for k, _ in pg_startup(s)]
    if kinds[0] != b'R' or b'K' not in kinds:
        fail('pg: startup replies %r' % kinds)
    s.sendall(pg_msg(b'Q', b'begin; select a, count(*), f(x, y) from t; vacuum t\0'))
    msgs = pg_until(s, b'Z')
    tags = [b.rstrip(b'\0') for k, b in msgs if k == b'C']
    row = [b for k, b in msgs if k == b'D']
    if tags != [b'BEGIN', b'SELECT 1', b'VACUUM'] or len(row) != 1 or msgs[-1] != (b'Z', b'T'):
        fail('pg: simple query replies %r' % msgs[:8])
    elif struct.unpack('>H', row[0][:2])[0] != 3 or \
            row[0][6:6 + struct.unpack('>I', row[0][2:6])[0]].lstrip(b'0') != b'1':
        # the value is 1, grown with leading zeros to the drawn response size
        # (int() would refuse the longest ones: over 4300 digits)
        fail('pg: row %r' % row[0][:32])
    s.sendall(pg_msg(b'X'))
    if not closed(s):
        fail('pg: Terminate did not close')
    pg_hostile(clone)


# ---- MySQL / MariaDB ----

def sysbench(clone, *args):
    """oltp_read_only for 2 s on 2 threads: transactions, no error."""
    argv = ['sysbench', 'oltp_read_only', '--mysql-host=127.0.0.1', '--mysql-port=%d' % clone.port,
            '--mysql-user=clone', '--mysql-password=any', '--mysql-db=clone', '--tables=1',
            '--table-size=1000', '--threads=2', '--time=2'] + list(args) + ['run']
    rc, out = run_tool(argv)
    done = re.search(r'transactions: +(\d+)', out)
    errors = re.search(r'ignored errors: +(\d+)', out)
    if rc != 0 or not done or int(done.group(1)) == 0 or not errors or int(errors.group(1)):
        fail('sysbench %s: status %d: %s' % (' '.join(args), rc, out.strip()[-400:]))


def my_packet(seq, body):
    return struct.pack('<I', len(body))[:3] + bytes([seq]) + body


def my_recv(s):
    """One packet: (seq, payload)."""
    head = recv_exact(s, 4)
    return head[3], recv_exact(s, int.from_bytes(head[:3], 'little'))


def my_hello(s, plugin=b'mysql_native_password'):
    """Greeting, a HandshakeResponse41 naming plugin, and the switch to
    mysql_native_password if the clone asks: the OK's sequence number."""
    seq, hello = my_recv(s)
    if seq != 0 or hello[0] != 10 or not hello.rstrip(b'\0').endswith(b'mysql_native_password'):
        fail('mysql: greeting %r' % hello[:48])
    caps = 0x0000a20f | 0x80000 | 0x200000
    body = struct.pack('<IIB23x', caps, 1 << 24, 45) + b'clone\0' + b'\x14' + b'x' * 20 + plugin + b'\0'
    s.sendall(my_packet(1, body))
    seq, reply = my_recv(s)
    if reply[0] == 0xfe:
        if plugin == b'mysql_native_password' or not reply.startswith(b'\xfemysql_native_password\0'):
            fail('mysql: auth switch %r' % reply)
        s.sendall(my_packet(seq + 1, b'y' * 20))
        seq, reply = my_recv(s)
    if reply[0] != 0:
        fail('mysql: handshake answered %r' % reply)
    return seq


def my_result(s):
    """A result set: (columns, rows); rows as payloads."""
    _, head = my_recv(s)
    if head[0] in (0, 0xff):
        return head, []
    cols = head[0]
    for _ in range(cols):
        my_recv(s)
    if my_recv(s)[1][0] != 0xfe:
        fail('mysql: no EOF after %d column definitions' % cols)
    rows = []
    while True:
        _, p = my_recv(s)
        if p[0] == 0xfe and len(p) < 9:
            return cols, rows
        rows.append(p)


def my_value(p, offset):
    """The length-encoded value at p[offset:]: (its bytes)."""
    n = p[offset]
    size = {0xfc: 2, 0xfd: 3, 0xfe: 8}.get(n, 0)
    if size:
        n = int.from_bytes(p[offset + 1:offset + 1 + size], 'little')
    return p[offset + 1 + size:offset + 1 + size + n]


def my_commands(clone):
    """Each command the connection phase and sysbench do not cover."""
    s = clone.connect()
    my_hello(s, b'caching_sha2_password')
    s.sendall(my_packet(0, b'\x03select a, count(*), f(x, y) from t'))
    cols, rows = my_result(s)
    if cols != 3 or len(rows) != 1 or my_value(rows[0], 0).lstrip(b'0') != b'1' or \
            not rows[0].endswith(b'\xfb\xfb'):
        fail('mysql: query result %r %r' % (cols, rows[:1]))
    s.sendall(my_packet(0, b'\x16SELECT c FROM t WHERE id BETWEEN ? AND ? -- ?'))
    _, ok = my_recv(s)
    stmt, ncols, params = struct.unpack('<xIHH', ok[:9])
    for _ in range(params + 1 + ncols + 1):
        my_recv(s)
    if ncols != 1 or params != 3:
        fail('mysql: prepared %d columns, %d parameters' % (ncols, params))
    execute = struct.pack('<BIBI', 0x17, stmt, 0, 1) + b'\0\x01' + b'\x03\0' * 3 + b'\x01\0\0\0' * 3
    s.sendall(my_packet(0, execute))
    cols, rows = my_result(s)
    if cols != 1 or len(rows) != 1 or rows[0][:2] != b'\0\0' or my_value(rows[0], 2).lstrip(b'0') != b'1':
        fail('mysql: execute result %r %r' % (cols, rows[:1]))
    s.sendall(my_packet(0, struct.pack('<BI', 0x19, stmt)))     # close: no answer
    s.sendall(my_packet(0, execute))
    head, _ = my_result(s)
    if head[:3] != b'\xff\xdb\x04':
        fail('mysql: closed statement executed: %r' % head)
    for cmd, want in ((b'\x0e', 0), (b'\x02clone', 0), (b'\x1b\x01\x00', 0xfe), (b'\x03BEGIN', 0),
                      (b'\x03', 0xff), (b'\x16' + b'?,' * 70000, 0xff), (b'\x63', 0xff)):
        s.sendall(my_packet(0, cmd))
        _, reply = my_recv(s)
        if reply[0] != want:
            fail('mysql: command %r answered %r' % (cmd[:8], reply[:16]))
    s.sendall(my_packet(0, b'\x01'))
    if not closed(s):
        fail('mysql: COM_QUIT did not close')


def my_hostile(clone):
    """Malformed packets close the connection; the clone serves on."""
    hello = struct.pack('<IIB23x', 0x000aa20f, 1 << 24, 45) + b'u\0\x00'
    bad = [b'\0\0\0\x01',                                     # empty packet
           my_packet(2, hello),                               # out of sequence
           my_packet(1, struct.pack('<IIB23x', 0x0000000f, 1 << 24, 45) + b'u\0\0'),  # pre-4.1
           my_packet(1, struct.pack('<IIB23x', 0x000aaa0f, 1 << 24, 45)),   # TLS, not offered
           my_packet(1, hello[:33]),                          # no end to the user name
           my_packet(1, hello[:-1] + b'\xff' + b'x' * 8),    # auth data past the end
           b'\xff\xff\xff\x01' + b'\0' * 64]                # split over packets
    after_hello = [my_packet(1, b'\x0e'),                      # a command out of sequence
                   my_packet(0, b'\x17\x01\0\0\0'),           # execute without its fields
                   my_packet(0, b'\x19\x01\0'),               # close without its id
                   my_packet(0, b'\x1b\x01')]                  # set option without its value
    for i, raw in enumerate(bad + after_hello):
        s = clone.connect()
        if i >= len(bad):
            my_hello(s)
        else:
            my_recv(s)
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            continue  # closed while it was still sending
        if not closed(s):
            fail('mysql: malformed packet %r did not close' % raw[:16])


def scenario_mysql(clone):
    for args in ((), ('--db-ps-mode=disable',)):
        sysbench(clone, *args)
    my_commands(clone)
    my_hostile(clone)


# ---- replay under strace ----

# What tests/runtime/cfg_test.c's replay table asks per request (read:
# 0.5 of the file and 0.2 of the eventfd; write: the eventfd's).
EXPECTED = {'read': 0.7, 'write': 0.3, 'pwritev': 0.25, 'fdatasync': 0.1, 'openat': 0.3, 'close': 0.3,
            'newfstatat': 0.4, 'clock_nanosleep': 0.2, 'sched_yield': 0.15, 'futex': 1.5,
            'mmap': 0.55, 'munmap': 0.55, 'mprotect': 0.3, 'madvise': 0.25}


def strace_counts(path):
    counts = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and fields[3].isdigit() and fields[-1] != 'total':
                counts[fields[-1]] = int(fields[3])
    return counts


def traced_env():
    """The environment of a clone under strace: LeakSanitizer cannot stop
    a traced process's threads."""
    env = dict(os.environ)
    env['ASAN_OPTIONS'] = env.get('ASAN_OPTIONS', '') + ':detect_leaks=0'
    return env


def serve_under(exe, wrap, n, payload, timeout, env=None, think=0):
    """n requests to a clone started under wrap, which ends after them;
    think s between a response and the next request."""
    clone = Clone(exe, ['--max-requests', str(n)], wrap, env)
    s = clone.connect()
    for _ in range(n):
        lp_request(s, payload)
        if think:
            time.sleep(think)
    clone.finish('%d requests' % n, timeout)
    s.close()


def strace_run(exe, n, think=0):
    out = tempfile.NamedTemporaryFile(suffix='.strace', delete=False).name
    env = traced_env()
    serve_under(exe, ['strace', '-f', '-c', '-o', out], n, b'replay', 60, env, think)
    counts = strace_counts(out)
    os.unlink(out)
    return counts


def scenario_replay(exe):
    """Two runs, so that start-up and exit calls cancel out."""
    small, large = 200, 2200
    a, b = strace_run(exe, small), strace_run(exe, large)
    for name, rate in EXPECTED.items():
        got = (b.get(name, 0) - a.get(name, 0)) / (large - small)
        print('  %-16s %.3f per request (want %.3f)' % (name, got, rate))
        if abs(got - rate) > 0.05 * rate:
            fail('replay: %s: %.3f per request, want %.3f' % (name, got, rate))


def scenario_park_serial(exe):
    """A serial event loop serves each connection with an epoll set of its
    own: its pooled connections to the child are watched again in the
    next one (a call on one still marked as watched by the last set would
    wait for an event that never comes: a timeout per call)."""
    child = LpChild(0.002)
    clone = Clone(exe, ['--upstream', 'seq=127.0.0.1:%d' % child.port,
                        '--upstream', 'par=127.0.0.1:%d' % child.port])
    for _ in range(5):
        s = clone.connect()
        for _ in range(3):
            lp_request(s, b'x')
        s.close()
    clone.stop()
    for name in ('seq', 'par'):
        got = upstream_counts(clone.stderr(), name)
        if got != (30, 0, 0):
            fail('park-serial: upstream %s: calls, errors, timeouts %s, want (30, 0, 0)'
                 % (name, got))
    child.close()


def scenario_waits(exe):
    """The epoll loop waits at the model's rate (CFG_WAITS, 3 per
    request), where one request at a time would make it wait once: the
    owed waits do not block. Two runs: start-up and exit cancel out."""
    small, large = 100, 600
    t0 = time.time()
    a, b = strace_run(exe, small), strace_run(exe, large)
    got = (b.get('epoll_wait', 0) - a.get('epoll_wait', 0)) / (large - small)
    print('  epoll_wait %.3f per request (want 3.000) in %.1f s' % (got, time.time() - t0))
    if abs(got - 3.0) > 0.15:
        fail('waits: %.3f epoll_wait per request, want 3.0' % got)


def scenario_main_calls(exe):
    """The main thread playing class "main" (cfg_test.c CFG_MAIN_CLASS)
    wakes every 20 ms and makes 3 madvise calls per wake-up: counted
    under strace for about a second, against its epoll_wait calls that
    timed out (its wake-ups)."""
    out = tempfile.NamedTemporaryFile(suffix='.strace', delete=False).name
    clone = Clone(exe, [], ['strace', '-f', '-qq', '-e', 'trace=madvise,epoll_wait', '-o', out],
                  traced_env())
    traced = traced_pid(clone.proc.pid)
    pid = str(traced)
    time.sleep(1.0)
    os.kill(traced, signal.SIGTERM)     # strace's own would not reach it
    clone.finish('SIGTERM', STOP_S)
    wakes = calls = 0
    with open(out, errors='replace') as f:
        for line in f:
            if line.split(' ', 1)[0] != pid:
                continue
            # a call another thread's line cut ends in a '<... resumed>' line
            wakes += 'epoll_wait' in line and line.rstrip().endswith('= 0')
            calls += 'madvise(' in line
    os.unlink(out)
    print('  main thread: %d wake-ups, %d madvise calls' % (wakes, calls))
    if wakes < 10 or abs(calls - 3 * wakes) > 3 + 0.05 * 3 * wakes:
        fail('main-calls: %d madvise calls for %d wake-ups, want 3 each' % (calls, wakes))


# ---- the body's share after the response, under strace ----

def scenario_after(exe, none, wait):
    """A loop that reads until EAGAIN waits again (a pool's re-arm, a poll
    loop's poll) after an empty read only. The client thinks 2 ms before
    its next request (under strace the clone's calls are slower than a
    client that answers at once): with 95% of a body of some 5-20 ms after
    each response, the request is there when the thread reads again; with
    none after, the thread reads before it comes."""
    small, large = 20, 100
    a, b = strace_run(exe, small, 0.002), strace_run(exe, large, 0.002)
    waits = (b.get(wait, 0) - a.get(wait, 0)) / (large - small)
    reads = (b.get('read', 0) - a.get('read', 0)) / (large - small)
    print('  %s %.3f, read %.3f per request' % (wait, waits, reads))
    if none and waits < 0.7:
        fail('after-none: %.3f %s per request: the loop found requests it had no time '
             'to find' % (waits, wait))
    if not none and waits > 0.3:
        fail('after: %.3f %s per request: the work after the response did not run '
             'before the next read' % (waits, wait))


# ---- the body's share per wake-up of an event loop ----

def clone_cpu_ns(clone):
    """CPU time of the clone's threads, ns (schedstat's first field)."""
    total = 0
    for tid in os.listdir('/proc/%d/task' % clone.proc.pid):
        with open('/proc/%d/task/%s/schedstat' % (clone.proc.pid, tid)) as f:
            total += int(f.read().split()[0])
    return total


def batches_cpu(clone, s, rounds, batch, pipelined):
    """CPU ns per request of `rounds` batches of `batch` requests, sent
    in one write each (one wake-up) or one after the other."""
    req = struct.pack('>I', 3) + b'abc'
    before = clone_cpu_ns(clone)
    for _ in range(rounds):
        if pipelined:
            s.sendall(req * batch)
            for _ in range(batch):
                lp_response(s)
        else:
            for _ in range(batch):
                lp_request(s, b'abc')
    return (clone_cpu_ns(clone) - before) / (rounds * batch)


def scenario_wake(exe, share):
    """A body of 40 million instructions a request (CFG_IPR_BIG), all of
    it per wake-up (CFG_WAKE=1.0) or all per request: eight requests
    pipelined in one write are served in one or two wake-ups of the loop
    (a large response that fills the socket leaves the rest for the wake-up
    that writes it). Per wake-up, they cost one or two bodies between them
    (0.14-0.28 of eight requests sent one after the other here); per
    request, the same as those. Interleaved rounds, the ratio of the
    medians."""
    clone = Clone(exe)
    try:
        s = clone.connect()
        lp_request(s, b'warm')
        seq, pipe = [], []
        for _ in range(5):
            seq.append(batches_cpu(clone, s, 2, 8, False))
            pipe.append(batches_cpu(clone, s, 2, 8, True))
        s.close()
    except Exception as e:
        fail('wake: %r; clone stderr: %s' % (e, clone.stderr()))
        clone.stop()
        return
    clone.stop()
    ratio = sorted(pipe)[2] / sorted(seq)[2]
    print('  CPU per request: %.2f ms one at a time, %.2f ms pipelined by 8 (ratio %.3f, '
          'rounds %s)' % (sorted(seq)[2] / 1e6, sorted(pipe)[2] / 1e6, ratio,
                          ' '.join('%.2f' % (p / q) for p, q in zip(pipe, seq))))
    if share and ratio > 0.4:
        fail('wake: pipelined requests cost %.2f of one at a time, want well under half' % ratio)
    if not share and not 0.75 < ratio < 1.25:
        fail('wake-none: pipelined requests cost %.2f of one at a time, want 1' % ratio)


# ---- background wake-ups paced by requests, under valgrind ----

PACE = 50          # cfg_test.c CFG_PACED: requests_per_wake
PACED_THREADS = 2
SYSCALL_RE = re.compile(r'SYSCALL\[\d+,(\d+)\]\(\d+\) sys_(\w+) \( (\w+), (\d+)')


def cond_waits(path):
    """Futex waits (FUTEX_WAIT, FUTEX_WAIT_BITSET) of the threads that
    never read a socket, the background ones, on the word each waits on
    most: its own (rt_doze.c). A wait for the shared mutex, when a server
    thread held it as the simulator switched threads, is not a wake-up (3
    of them once made 27 waits of 24 in CI)."""
    calls = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = SYSCALL_RE.search(line)
            if m:
                calls.setdefault(m.group(1), []).append(
                    (m.group(2), m.group(3), int(m.group(4))))
    total = 0
    for c in calls.values():
        if any(name == 'read' for name, _, _ in c):
            continue
        words = collections.Counter(addr for name, addr, op in c
                                    if name == 'futex' and op & 127 in (0, 9))
        total += max(words.values(), default=0)
    return total


def valgrind_run(exe, n):
    log = tempfile.NamedTemporaryFile(suffix='.vg', delete=False).name
    serve_under(exe, ['valgrind', '--tool=none', '--trace-syscalls=yes', '--log-file=' + log],
                n, b'paced', 60)
    waits = cond_waits(log)
    os.unlink(log)
    return waits


def scenario_paced(exe):
    """Two runs, so that start and stop cancel out: a minute's period
    wakes nobody, the pace wakes each thread every PACE requests."""
    small, large = 100, 700
    got = valgrind_run(exe, large) - valgrind_run(exe, small)
    want = PACED_THREADS * (large - small) // PACE
    print('  background wake-ups under valgrind: %d for %d requests (want %d)' %
          (got, large - small, want))
    if abs(got - want) > 2:
        fail('paced: %d background wake-ups for %d requests, want %d' %
             (got, large - small, want))


FUTEX_RE = re.compile(r'^\d+\s+futex\(0x[0-9a-f]+, (FUTEX_\w+)')
# an eventfd write of 1 (rt_eventfd.c; its priming write is of 2^62),
# its line maybe cut by another thread's ('8 <unfinished ...>')
EVENTFD_ONE = '"\\1\\0\\0\\0\\0\\0\\0\\0", 8'


def futex_ops(exe, n):
    """{op: calls} of a native run of n requests, under strace, and its
    eventfd writes of 1 as 'eventfd'."""
    out = tempfile.NamedTemporaryFile(suffix='.strace', delete=False).name
    serve_under(exe, ['strace', '-f', '-qq', '-e', 'trace=futex,write,mprotect,madvise', '-o', out],
                n, b'paced', 60, traced_env())
    ops = {}
    with open(out, errors='replace') as f:
        for line in f:
            m = FUTEX_RE.search(line)
            op = m.group(1) if m else 'eventfd' if EVENTFD_ONE in line else None
            for name in ('mprotect', 'madvise'):
                op = name if re.search(r'\b%s\(' % name, line) else op
            if op:
                ops[op] = ops.get(op, 0) + 1
    os.unlink(out)
    return ops


def scenario_paced_native(exe):
    """A pool paced natively (its period a minute): each of its 2
    threads sleeps once per PACE requests served (one FUTEX_WAIT), is
    woken by the serving thread that reached its target (one FUTEX_WAKE),
    and makes 1.5 futex calls of its own per wake-up (FUTEX_WAKE of a
    word nobody waits on): 2.5 wakes per wake-up in all; and half an
    eventfd write per wake-up; and its page calls (cfg_test.c's
    pool_calls): 2 mprotect and half a madvise per wake-up. Two runs, so
    that start and stop cancel out.

    A thread still busy with its last wake-up's work when its next
    target comes does not sleep: neither its FUTEX_WAIT nor the waker's
    FUTEX_WAKE is made (the ASan CI run, slowed by strace, had 42 waits
    and 114 wakes for 48 wake-ups). So the waits may fall short of the
    wake-ups, a few, and the wakes are 1.5 per wake-up plus one per wait."""
    small, large = 200, 1400
    a, b = futex_ops(exe, small), futex_ops(exe, large)
    wakeups = PACED_THREADS * (large - small) / PACE
    got = {op: b.get(op, 0) - a.get(op, 0) for op in set(a) | set(b)}
    waits = got.get('FUTEX_WAIT_PRIVATE', 0)
    print('  futex calls for %d requests: %s (want %d waits at most, '
          '%d wakes when each sleeps)' % (large - small, got, wakeups, 2.5 * wakeups))
    if not 0.75 * wakeups <= waits <= 1.1 * wakeups:
        fail('paced-native: %s futex waits for %d wake-ups' % (got, wakeups))
    if abs(got.get('FUTEX_WAKE_PRIVATE', 0) - 1.5 * wakeups - waits) > 0.1 * wakeups:
        fail('paced-native: %s futex wakes for %d wake-ups and %d waits' %
             (got, wakeups, waits))
    if abs(got.get('eventfd', 0) - 0.5 * wakeups) > 0.1 * wakeups:
        fail('paced-native: %s eventfd writes for %d wake-ups' % (got, wakeups))
    for name, per_wake in (('mprotect', 2.0), ('madvise', 0.5)):
        if abs(got.get(name, 0) - per_wake * wakeups) > 0.1 * wakeups:
            fail('paced-native: %s %s calls for %d wake-ups, want %.1f each' %
                 (got, name, wakeups, per_wake))


# ---- the order of one wake-up's reads and writes, under strace ----

def traced_pid(wrapper):
    """The clone strace started (its one child)."""
    deadline = time.time() + 5
    while time.time() < deadline:
        with open('/proc/%d/task/%d/children' % (wrapper, wrapper)) as f:
            kids = f.read().split()
        if kids:
            return int(kids[0])
        time.sleep(0.05)
    raise RuntimeError('strace started no process')


def wake_up_calls(path):
    """The reads and writes (r, w) after the first epoll_wait that returned
    2 once the clone was continued, up to that thread's next epoll_wait or
    signal."""
    calls, thread, cont = [], None, False
    with open(path) as f:
        for line in f:
            pid, _, rest = line.partition(' ')
            rest = rest.lstrip()
            if 'SIGCONT' in rest:
                cont = True
            elif cont and thread is None and rest.startswith('epoll_wait(') and \
                    rest.rstrip().endswith('= 2'):
                thread = pid
            elif thread == pid and rest.startswith(('epoll_wait(', '---')):
                break   # the next wake-up, or the stop
            elif thread == pid and rest.startswith(('read(', 'write(')):
                calls.append(rest[0])
    return ''.join(calls)


def scenario_order(exe, held):
    out = tempfile.NamedTemporaryFile(suffix='.strace', delete=False).name
    env = traced_env()
    clone = Clone(exe, [], ['strace', '-f', '-qq', '-e', 'trace=epoll_wait,read,write',
                            '-o', out], env)
    try:
        a, b = clone.connect(), clone.connect()
        lp_request(a, b'warm')
        lp_request(b, b'warm')
        pid = traced_pid(clone.proc.pid)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.2)
        a.sendall(struct.pack('>I', 3) + b'one')
        b.sendall(struct.pack('>I', 3) + b'two')
        time.sleep(0.2)
        os.kill(pid, signal.SIGCONT)
        lp_response(a)
        lp_response(b)
        os.kill(pid, signal.SIGTERM)
        clone.proc.wait(STOP_S)
        got = wake_up_calls(out)
        want = 'rrww' if held else 'rwrw'
        print('  one wake-up, two ready connections: %s (want %s)' % (got, want))
        if got != want:
            fail('order: reads and writes of one wake-up were %r, want %r' % (got, want))
    finally:
        if clone.proc.poll() is None:
            clone.proc.kill()
            clone.proc.wait()
        os.unlink(out)


# ---- which thread of a shared listen socket serves which connection ----

def readers(path):
    """For each accepted socket, in accept order: the threads that read it."""
    conns, latest = [], {}
    with open(path) as f:
        for line in f:
            tid, _, rest = line.partition(' ')
            rest = rest.strip()
            m = re.match(r'(?:accept4?\(|<\.\.\. accept4? resumed>).*\) += (\d+)$', rest)
            if m:
                latest[m.group(1)] = len(conns)
                conns.append(set())
                continue
            m = re.match(r'read\((\d+),', rest)
            if m and m.group(1) in latest:
                conns[latest[m.group(1)]].add(tid)
    return conns


def scenario_turns(exe, threads):
    """A probe that connects and leaves at once, then one connection per
    thread: the connections go round robin, one to each thread, however
    late the probe's thread sees it leave."""
    out = tempfile.NamedTemporaryFile(suffix='.strace', delete=False).name
    env = traced_env()
    clone = Clone(exe, [], ['strace', '-f', '-qq', '-e', 'trace=accept,accept4,read', '-o', out],
                  env)
    try:
        clone.connect().close()
        socks = [clone.connect() for _ in range(threads)]
        for i in range(5):
            for s in socks:
                lp_request(s, b'turn %d' % i)
        os.kill(traced_pid(clone.proc.pid), signal.SIGTERM)
        clone.proc.wait(STOP_S)
        got = readers(out)[1:1 + threads]
        print('  threads reading each connection after the probe: %s' %
              [sorted(r) for r in got])
        if len(got) != threads or len(set().union(*got)) != threads or \
                any(len(r) != 1 for r in got):
            fail('turns: %d connections read by threads %s, want one thread each' %
                 (threads, [sorted(r) for r in got]))
    finally:
        if clone.proc.poll() is None:
            clone.proc.kill()
            clone.proc.wait()
        os.unlink(out)


# ---- connections capped below the descriptor limit ----

# The clone starts with soft limit FDCAP_SOFT and raises it to the hard one.
FDCAP_SOFT, FDCAP_HARD = 48, 128
FDCAP_IDLE = 400    # idle connections opened (at least), well above the limit
# Connections accepted in one wake-up by two threads may interleave: seen
# 8 apart at the boundary in one ASan run of rt_fdcap_prefork (2026-12-06).
FDCAP_SLACK = 8


def clone_pids(clone):
    """The clone's process and the processes it forked."""
    pid = clone.proc.pid
    with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
        return [pid] + [int(p) for p in f.read().split()]


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total


def socket_owners(pids, port):
    """{client port: pid} of the connections to port the processes hold."""
    inodes = {}
    for pid in pids:
        for fd in os.listdir('/proc/%d/fd' % pid):
            try:
                link = os.readlink('/proc/%d/fd/%s' % (pid, fd))
            except OSError:
                continue
            if link.startswith('socket:['):
                inodes[link[8:-1]] = pid
    owners = {}
    with open('/proc/net/tcp') as f:
        next(f)
        for line in f:
            x = line.split()
            if int(x[1].split(':')[1], 16) == port and x[9] in inodes:
                owners[int(x[2].split(':')[1], 16)] = inodes[x[9]]
    return owners


def open_idle(clone, pids, n, most, batch=20):
    """At least n idle connections, in batches, and the process that
    accepted each (seen before it can have been closed for room); more, up
    to most, until every serving process has closed some (processes
    sharing a listen socket need not get even shares)."""
    serving = pids[1:] or pids
    socks, owner = [], []
    while len(socks) < n or (len(socks) < most and not all(
            any(o == pid and peer_closed(s) for s, o in zip(socks, owner)) for pid in serving)):
        new = [clone.connect() for _ in range(batch)]
        ports = [s.getsockname()[1] for s in new]
        deadline = time.time() + 5
        seen = socket_owners(pids, clone.port)
        while not all(p in seen for p in ports):
            if time.time() > deadline:
                raise RuntimeError('%d connections not accepted within 5 s' %
                                   sum(p not in seen for p in ports))
            time.sleep(0.01)
            seen = socket_owners(pids, clone.port)
        socks += new
        owner += [seen[p] for p in ports]
    return socks, owner


def peer_closed(s):
    """Has the clone closed this idle connection (nothing was sent on it)?"""
    s.setblocking(False)
    try:
        return s.recv(1) == b''
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        s.settimeout(10)


def check_oldest_closed(socks, owner, eof):
    """Per process: the connections closed for room are its oldest ones."""
    for pid in sorted(set(owner)):
        mine = [eof[i] for i in range(len(socks)) if owner[i] == pid]
        k = mine.count(True)
        kept = len(mine) - k
        print('  process %d: %d idle connections, the oldest %d closed, %d kept' %
              (pid, len(mine), k, kept))
        if not k:
            fail('fdcap: process %d closed none of its %d idle connections' % (pid, len(mine)))
        if any(mine[k + FDCAP_SLACK:]) or not all(mine[:max(0, k - FDCAP_SLACK)]):
            fail('fdcap: process %d closed idle connections out of age order: %s' %
                 (pid, ''.join('x' if c else '.' for c in mine)))
        if kept <= FDCAP_SOFT:
            fail('fdcap: process %d kept %d connections: its soft limit %d was not raised' %
                 (pid, kept, FDCAP_SOFT))


def check_new_clients(clone, n):
    """New clients get their response promptly (an idle one makes room)."""
    fresh = []
    for i in range(n):
        start = time.time()
        s = clone.connect()
        s.settimeout(3)
        lp_request(s, b'new client %d' % i)
        took = time.time() - start
        if took > 1:
            fail('fdcap: new client %d answered after %.2f s' % (i, took))
        fresh.append(s)
    return fresh


def check_refused(clone, busy):
    """With every connection busy (a request half sent), a new client is
    closed at once, not left waiting."""
    for s in busy:
        s.sendall(b'\x00')
    time.sleep(0.3)
    start = time.time()
    s = clone.connect()
    s.sendall(struct.pack('>I', 3) + b'new')
    if not closed(s) or time.time() - start > 2:
        fail('fdcap: with no idle connection a new client was not closed at once (%.2f s)' %
             (time.time() - start))
    s.close()


def scenario_fdcap(exe):
    """FDCAP_IDLE idle connections to a clone whose fd limit is far lower:
    it does not spin, keeps answering new clients by closing its oldest
    idle connections, refuses clients when none is idle, and stops cleanly."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    clone = Clone(exe, [], ['prlimit', '--nofile=%d:%d' % (FDCAP_SOFT, FDCAP_HARD)])
    socks, fresh = [], []
    try:
        pids = clone_pids(clone)
        socks, owner = open_idle(clone, pids, FDCAP_IDLE, 3 * FDCAP_IDLE)
        time.sleep(0.5)
        before = cpu_ticks(pids)
        time.sleep(1)
        cpu = (cpu_ticks(pids) - before) / os.sysconf('SC_CLK_TCK')
        print('  %d idle connections held: %.0f%% of a CPU' % (len(socks), 100 * cpu))
        if cpu > 0.2:
            fail('fdcap: %.0f%% of a CPU with idle connections held' % (100 * cpu))
        fresh = check_new_clients(clone, 5)
        eof = [peer_closed(s) for s in socks]
        check_oldest_closed(socks, owner, eof)
        check_refused(clone, [s for s, e in zip(socks, eof) if not e] + fresh)
        told = clone.stderr().count('the cap below the fd limit')
        if told != len(set(owner)):
            fail('fdcap: the cap was told %d times by %d processes: %s' %
                 (told, len(set(owner)), clone.stderr()))
    except Exception as e:
        fail('fdcap: %r; clone stderr: %s' % (e, clone.stderr()))
    # room for the stop's own two clients
    for s in fresh:
        s.close()
    clone.stop()
    for s in socks:
        s.close()


# ---- a process per connection ----

def child_pids(clone):
    with open('/proc/%d/task/%d/children' % (clone.proc.pid, clone.proc.pid)) as f:
        return [int(p) for p in f.read().split()]


def wait_children(clone, n, what):
    """The clone has n children (reaped ones are gone) within 3 s."""
    deadline = time.time() + 3
    while len(child_pids(clone)) != n and time.time() < deadline:
        time.sleep(0.02)
    if len(child_pids(clone)) != n:
        fail('forking: %d children %s, expected %d' % (len(child_pids(clone)), what, n))


def check_max_requests_forking(exe):
    """--max-requests counts the requests of every child together."""
    clone = Clone(exe, ['--max-requests', '50'])
    served = 0
    socks = [clone.connect() for _ in range(2)]
    try:
        for i in range(100):
            lp_request(socks[i % 2], b'x')
            served += 1
    except (OSError, ValueError):
        pass
    for s in socks:
        s.close()
    clone.finish('--max-requests 50', STOP_S)
    if not 50 <= served <= 52:
        fail('forking: %d requests served under --max-requests 50' % served)


def scenario_forking(clone):
    """A process per connection, one thread each, gone when it closes."""
    wait_children(clone, 0, 'before any client')
    socks = [clone.connect() for _ in range(3)]
    for i, s in enumerate(socks):
        lp_request(s, b'client %d' % i)
    wait_children(clone, 3, 'with 3 clients')
    for pid in child_pids(clone):
        n = len(os.listdir('/proc/%d/task' % pid))
        if n != 1:
            fail("forking: a connection's process has %d threads, expected 1" % n)
    socks.pop().close()
    wait_children(clone, 2, 'after one client left')
    for s in socks:
        s.close()
    wait_children(clone, 0, 'after all clients left')
    scenario_lp(clone)


# ---- serial connections ----

def scenario_serial(clone):
    """Processes that serve one connection at a time (two here): a third
    client waits while two hold theirs, and is served once one leaves."""
    held = [clone.connect() for _ in range(2)]
    for i, s in enumerate(held):
        lp_request(s, b'held %d' % i)
    third = clone.connect()
    third.sendall(struct.pack('>I', 5) + b'third')
    r, _, _ = select.select([third], [], [], 0.5)
    if r:
        fail('serial: a third client was served while two held the processes')
    held.pop().close()
    third.settimeout(3)
    lp_response(third)
    third.close()
    for s in held:
        s.close()
    scenario_lp(clone)


def scenario_balance(clone):
    """Pre-forked processes on one shared listen socket: a burst of two
    connections per process ends with two in each (opened together, one
    process used to take them all), three rounds."""
    pids = clone_pids(clone)[1:]
    for rnd in range(3):
        socks = [clone.connect() for _ in range(2 * len(pids))]
        for i, s in enumerate(socks):
            lp_request(s, b'burst %d' % i)
        owners = socket_owners(pids, clone.port)
        ports = [s.getsockname()[1] for s in socks]
        per = sorted(sum(1 for p in ports if owners.get(p) == pid) for pid in pids)
        print('  round %d: connections per process %s' % (rnd, per))
        if per != [2] * len(pids):
            fail('balance: %d connections went %s to %d processes, want 2 each' %
                 (len(socks), per, len(pids)))
        for s in socks:
            s.close()
        time.sleep(0.2)
    scenario_lp(clone)


class LpChild:
    """A length-prefixed child on a free port: a thread per connection,
    each request answered (its own bytes back) after delay s; counts the
    calls and the most it held at once."""

    def __init__(self, delay):
        self.delay, self.calls, self.busy, self.most = delay, 0, 0, 0
        self.lock = threading.Lock()
        self.srv = socket.create_server(('127.0.0.1', 0))
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                s, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(s,), daemon=True).start()

    def serve(self, s):
        with s:
            try:
                while True:
                    n = struct.unpack('>I', recv_exact(s, 4))[0]
                    body = recv_exact(s, n)
                    with self.lock:
                        self.calls += 1
                        self.busy += 1
                        self.most = max(self.most, self.busy)
                    time.sleep(self.delay)
                    with self.lock:
                        self.busy -= 1
                    s.sendall(struct.pack('>I', n) + body)
            except (OSError, ValueError, struct.error):
                return

    def close(self):
        self.srv.close()


def upstream_counts(text, name):
    m = re.search(r'upstream %s: calls (\d+), errors (\d+), timeouts (\d+)' % name, text)
    if not m:
        fail('park: no counts of upstream %s in: %s' % (name, text))
        return (0, 0, 0)
    return tuple(int(x) for x in m.groups())


def scenario_park(exe):
    """Each request makes two sequential calls, then two parallel ones, to
    a child that answers after 30 ms: the event loop parks it and serves
    its other connections meanwhile (the child holds more than the two
    calls of one request at once), pipelined requests are answered in
    order, clients that go away while parked, a clone stopped with
    parked requests and calls past --upstream-timeout-ms end cleanly."""
    child = LpChild(0.03)
    ups = ['--upstream', 'seq=127.0.0.1:%d' % child.port,
           '--upstream', 'par=127.0.0.1:%d' % child.port]
    clone = Clone(exe, ups)
    parallel_clients(clone, 4, 10, 'park')
    if child.calls != 4 * 40 or child.most < 3:
        fail('park: the child had %d calls (want 160), at most %d at once (want 3 or more)'
             % (child.calls, child.most))
    s = clone.connect()
    s.sendall(b''.join(struct.pack('>I', 3) + b'abc' for _ in range(4)))
    for _ in range(4):
        lp_response(s)
    for _ in range(5):	# gone while parked
        g = clone.connect()
        g.sendall(struct.pack('>I', 1) + b'x')
        g.close()
    lp_request(s, b'still there')
    s.sendall(b''.join(struct.pack('>I', 3) + b'abc' for _ in range(8)))
    clone.stop()	# 8 requests of 90 ms each in progress
    text = clone.stderr()
    if upstream_counts(text, 'seq')[1:] != (0, 0):
        fail('park: errors or timeouts with a child in time: ' + text)
    clone = Clone(exe, ups + ['--upstream-timeout-ms', '5'])
    parallel_clients(clone, 2, 5, 'park')
    clone.stop()
    seq = upstream_counts(clone.stderr(), 'seq')
    par = upstream_counts(clone.stderr(), 'par')
    if seq[0] < 20 or seq[2] != seq[0] or par[2] != par[0]:
        fail('park: calls past the 5 ms bound are not all timeouts: seq %s, par %s' % (seq, par))
    child.close()


def scenario_async(exe, want_threads):
    """One async call per request to a child that answers after 20 ms.
    An epoll loop sends each after its response and reads the reply in
    its own waits (rt_park_async): no caller thread, and no futex call
    in the process per request; a poll loop hands them to the caller
    thread (want_threads counts it). Either way the answers do not wait
    for the calls, every call is made, and none counts as an error or a
    timeout, the last one's included: the client closes while it is in
    flight, which ends a serial connection's loop."""
    child = LpChild(0.02)
    env = dict(os.environ, DITTO_UPSTREAM_BG='127.0.0.1:%d' % child.port)
    clone = Clone(exe, [], env=env)
    check_threads(clone, want_threads)
    s = clone.connect()
    start = time.time()
    for _ in range(50):
        lp_request(s, b'async')
    took = time.time() - start
    s.close()
    time.sleep(0.2)     # the last replies come in
    clone.stop()
    # one line per process (serial connections: two processes)
    lines = re.findall(r'upstream bg: calls (\d+), errors (\d+), timeouts (\d+)', clone.stderr())
    calls, errors, timeouts = (sum(int(x[i]) for x in lines) for i in range(3))
    print('  50 requests in %.3f s; child: %d calls, at most %d at once; %s' %
          (took, child.calls, child.most, (calls, errors, timeouts)))
    if took > 0.5:
        fail('async: 50 answers took %.2f s: they waited for the 20 ms calls' % took)
    if child.calls != 50 or calls != 50 or errors or timeouts:
        fail('async: child %d calls, clone counts %s (want 50, no errors)' %
             (child.calls, (calls, errors, timeouts)))
    if want_threads == 1:
        a, b = async_futex_calls(exe, child, 100), async_futex_calls(exe, child, 400)
        print('  futex calls: %d for 100 requests, %d for 400' % (a, b))
        if b - a > 15:
            fail('async: %d futex calls for 300 more requests from an epoll loop' % (b - a))
    child.close()


def async_futex_calls(exe, child, n):
    out = tempfile.NamedTemporaryFile(suffix='.strace', delete=False).name
    env = dict(traced_env(), DITTO_UPSTREAM_BG='127.0.0.1:%d' % child.port)
    serve_under(exe, ['strace', '-f', '-qq', '-e', 'trace=futex', '-o', out], n, b'async', 60,
                env)
    with open(out, errors='replace') as f:
        calls = sum(1 for line in f if 'futex(' in line)
    os.unlink(out)
    return calls


SCENARIOS = {'lp': scenario_lp, 'balance': scenario_balance, 'raw': scenario_raw, 'resp': scenario_resp, 'mctext': scenario_mctext,
             'mcbin': scenario_mcbin, 'http': scenario_http, 'pg': scenario_pg,
             'mysql': scenario_mysql, 'forking': scenario_forking, 'serial': scenario_serial}


def options(exe):
    """Exit 2 on a bad option, 3 on a port in use."""
    rc = subprocess.run([exe, '--port', 'x'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if rc != 2:
        fail('bad option: exit status %d, want 2' % rc)
    clone = Clone(exe)
    rc = subprocess.run([exe, '--port', str(clone.port), '--max-seconds', '5'], stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, timeout=10).returncode
    if rc != 3:
        fail('port in use: exit status %d, want 3' % rc)
    clone.stop()


def check_deadline(exe):
    """--max-seconds alone stops the clone, with status 0."""
    clone = Clone(exe, ['--max-seconds', '0.5'])
    clone.finish('--max-seconds 0.5', STOP_S)


def main():
    exe, scenario = sys.argv[1], sys.argv[2]
    want_threads = int(sys.argv[3]) if len(sys.argv) > 3 else None
    want_children = int(sys.argv[4]) if len(sys.argv) > 4 else None
    start = time.time()
    if scenario == 'replay':
        scenario_replay(exe)
    elif scenario == 'paced':
        scenario_paced(exe)
    elif scenario == 'paced-native':
        scenario_paced_native(exe)
    elif scenario == 'main-calls':
        scenario_main_calls(exe)
    elif scenario == 'async':
        scenario_async(exe, want_threads)
    elif scenario.startswith('after'):
        scenario_after(exe, scenario.endswith('-none'),
                       'poll' if scenario.startswith('after-poll') else 'epoll_ctl')
    elif scenario == 'turns':
        scenario_turns(exe, want_threads)
    elif scenario == 'fdcap':
        scenario_fdcap(exe)
    elif scenario == 'park':
        scenario_park(exe)
    elif scenario == 'park-serial':
        scenario_park_serial(exe)
    elif scenario == 'waits':
        scenario_waits(exe)
    elif scenario.startswith('wake'):
        scenario_wake(exe, not scenario.endswith('-none'))
    elif scenario.startswith('order'):
        scenario_order(exe, scenario.endswith('-held'))
    else:
        clone = Clone(exe)
        try:
            check_threads(clone, want_threads)
            if want_children is not None and clone.children() != want_children:
                fail('%d processes forked, expected %d' % (clone.children(), want_children))
            SCENARIOS[scenario.split('-')[0]](clone)
            if scenario.endswith('-spread'):
                check_spread(clone)
            check_threads(clone, want_threads if scenario != 'http' else None)
        except Exception as e:
            fail('%s: %r; clone stderr: %s' % (scenario, e, clone.stderr()))
        clone.stop()
        check_deadline(exe)
        if scenario == 'lp':
            options(exe)
        if scenario == 'forking':
            check_max_requests_forking(exe)
    print('%s %s: %s in %.1f s' % (os.path.basename(exe), scenario,
                                   'FAILED' if failures else 'ok', time.time() - start))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
