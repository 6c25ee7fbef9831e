# SPDX-License-Identifier: MIT
"""The load generator (ditto_load_run, `ditto load`, ditto.load) against
real things: redis-server and memcached count exactly the requests sent;
a ground-truth server's bytes match its protocol; open loop holds a rate
below capacity and, above it, reports the queueing a closed loop hides
(coordinated omission); timeouts, refusals and Ctrl-C end cleanly; a
model's load gives real redis and memcached the profiled bytes per
request, its reads hitting; and clones built by `ditto synth` answer every
framing without errors. Servers that misbehave on purpose (never answer,
reset, close, send garbage, a mix) never make a run a quiet success: each
failure is counted by kind, and a run that answers nothing or passes its
deadline exits 4 (issue 17)."""

import ctypes
import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

import ditto
from ditto import _lib
from conftest import CLI, QUICK, Clone, Service, ditto as cli, free_port, need

SERVERS = os.environ.get('DITTO_SERVERS_DIR', '.')
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz', 'corpus',
                      'synth_generate')


def load_json(*args):
    r = cli('load', '--json', *args)
    return json.loads(r.stdout), r.stderr


def assert_sane_latency(res):
    lat = res['latency_ns']
    order = [lat[k] for k in ('p50', 'p90', 'p99', 'p99.9', 'max')]
    assert 0 < order[0] and order == sorted(order), lat
    assert 0 < lat['mean'] <= lat['max']


def ask(port, request, done):
    """Send one request and read until done(bytes) says the answer is whole."""
    with socket.create_connection(('127.0.0.1', port), timeout=5) as s:
        s.sendall(request)
        data = b''
        while not done(data):
            chunk = s.recv(65536)
            assert chunk, 'closed early: %r' % data
            data += chunk
    return data.decode()


def redis_stat(port, name):
    def whole(d):
        head, _, rest = d.partition(b'\r\n')
        return bool(head) and len(rest) >= int(head[1:]) + 2
    info = ask(port, b'*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n', whole)
    return int(info.split(name + ':')[1].split()[0])


def redis_commands(port):
    return redis_stat(port, 'total_commands_processed')


def model_means(path):
    """The model's mean request and answer sizes: byte totals over the
    request count where it has them, else its histograms' means."""
    req = json.loads(cli('model', 'json', path).stdout)['services'][0]['requests']

    def mean(kind):
        if req.get(kind + '_bytes_total'):
            return req[kind + '_bytes_total'] / req['count']
        b = req[kind + '_bytes']['buckets']
        return sum((x['lo'] + x['hi']) / 2 * x['count'] for x in b) / sum(x['count'] for x in b)
    return mean('request'), mean('response')


def bytes_per_request(res):
    return (res['bytes_sent'] + res['bytes_received']) / res['completed']


def memcached_stat(port, *names):
    stats = ask(port, b'stats\r\n', lambda d: d.endswith(b'END\r\n'))
    vals = dict(line.split()[1:3] for line in stats.splitlines() if line.startswith('STAT '))
    return sum(int(vals[n]) for n in names)


@pytest.fixture
def redis(started):
    port = free_port()
    svc = Service([need('redis-server'), '--port', str(port), '--bind', '127.0.0.1', '--save', '',
                   '--appendonly', 'no'], port)
    started.append(svc)
    return svc


@pytest.fixture
def memcached(started):
    port = free_port()
    svc = Service([need('memcached'), '-l', '127.0.0.1', '-p', str(port), '-U', '0'] +
                  (['-u', 'root'] if os.geteuid() == 0 else []), port)
    started.append(svc)
    return svc


@pytest.fixture
def srv_epoll(started):
    port = free_port()
    svc = Service([os.path.join(SERVERS, 'srv_epoll'), '--port', str(port), '--max-seconds', '60'],
                  port)
    started.append(svc)
    return svc


# A server of known capacity: each connection's thread sleeps 10 ms per
# length-prefixed request, then answers 1 byte. Ends on SIGTERM.
SLOW_SERVER = r'''
import socketserver, struct, sys, time
class H(socketserver.BaseRequestHandler):
    def read(self, n):
        b = b''
        while len(b) < n:
            c = self.request.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b
    def handle(self):
        try:
            while True:
                self.read(struct.unpack('>I', self.read(4))[0])
                time.sleep(0.01)
                self.request.sendall(b'\0\0\0\1x')
        except (EOFError, OSError):
            pass
socketserver.ThreadingTCPServer.daemon_threads = True
socketserver.ThreadingTCPServer.allow_reuse_address = True
srv = socketserver.ThreadingTCPServer(('127.0.0.1', int(sys.argv[1])), H)
srv.serve_forever()
'''


def test_closed_loop_sends_exactly_n_requests_to_redis(redis):
    n = 20000
    before = redis_commands(redis.port)
    res, _ = load_json('--port', redis.port, '--framing', 'resp', '-n', n, '-c', 8)
    after = redis_commands(redis.port)
    assert res['completed'] == n and res['errors'] == 0
    assert res['offered_qps'] == 0 and res['achieved_qps'] > 0
    assert_sane_latency(res)
    # the first INFO is counted once it has run
    assert n <= after - before <= n + 2


@pytest.mark.parametrize('framing', ['memcache-text', 'memcache-binary'])
def test_closed_loop_memcached_counts_every_get_and_set(memcached, framing):
    n = 10000
    before = memcached_stat(memcached.port, 'cmd_get', 'cmd_set')
    res, _ = load_json('--port', memcached.port, '--framing', framing, '-n', n, '--value-bytes',
                       200)
    assert res['completed'] == n and res['errors'] == 0
    assert_sane_latency(res)
    assert memcached_stat(memcached.port, 'cmd_get', 'cmd_set') - before == n


def test_model_load_gives_memcached_and_its_clone_the_same_bytes_and_reads_hit(
        tmp_path, started, memcached):
    model = os.path.join(CORPUS, 'profiled-memcached.msgpack')
    hits, misses = (memcached_stat(memcached.port, n) for n in ('get_hits', 'get_misses'))
    res, _ = load_json('--port', memcached.port, '--model', model, '-n', 3000, '-c', 4)
    assert res['completed'] == 3000 and res['errors'] == 0, res
    # memcaslap's load is mostly GETs that hit: so is ours
    assert memcached_stat(memcached.port, 'get_hits') - hits > 1000
    assert memcached_stat(memcached.port, 'get_misses') == misses
    req, ans = model_means(model)
    # a write is large either way (request or answer): the mix moves the
    # sides, hardly the total
    assert abs(res['bytes_sent'] / res['completed'] - req) < 0.05 * req, res
    # hits as large as the model's large answers; the rest are STORED, at
    # our write share (our GET is shorter than memcaslap's: more writes)
    assert abs(bytes_per_request(res) - (req + ans)) < 0.05 * (req + ans), res
    cli('synth', model, '-o', tmp_path / 'clone', '-q')
    clone = Clone(tmp_path / 'clone')
    started.append(clone)
    twin, _ = load_json('--port', clone.port, '--model', model, '-n', 3000, '-c', 4)
    assert twin['errors'] == 0, twin
    assert abs(bytes_per_request(twin) - bytes_per_request(res)) < 0.02 * bytes_per_request(res)


def test_model_load_gives_redis_the_profiled_bytes_and_reads_hit(redis):
    model = os.path.join(CORPUS, 'profiled-redis.msgpack')
    before = redis_commands(redis.port)
    res, _ = load_json('--port', redis.port, '--model', model, '-n', 3000, '-c', 4)
    # the 64 keys set before the run are all the extra commands
    assert 3000 + 64 <= redis_commands(redis.port) - before <= 3000 + 64 + 2
    assert res['completed'] == 3000 and res['errors'] == 0, res
    want = sum(model_means(model))
    assert abs(bytes_per_request(res) - want) < 0.05 * want, (res, want)
    assert redis_stat(redis.port, 'keyspace_hits') > 0
    assert redis_stat(redis.port, 'keyspace_misses') == 0


def test_length_prefixed_bytes_match_the_ground_truth_protocol(srv_epoll):
    n = 10000
    res, _ = load_json('--port', srv_epoll.port, '--framing', 'length-prefixed', '-n', n,
                       '--value-bytes', 100, '-c', 4)
    assert res['completed'] == n and res['errors'] == 0
    # requests: 4-byte length + 100; answers: 4 + srv_epoll's default 128
    assert res['bytes_sent'] == n * 104 and res['bytes_received'] == n * 132
    assert_sane_latency(res)


def test_poisson_open_loop_below_capacity_achieves_the_offered_rate(srv_epoll):
    res, err = load_json('--port', srv_epoll.port, '--framing', 'length-prefixed', '--mode',
                         'poisson', '--qps', 2000, '-d', 2)
    assert res['offered_qps'] == 2000 and res['errors'] == 0
    assert abs(res['achieved_qps'] - 2000) < 0.05 * 2000, res
    assert 'could not reach' not in err


def test_open_loop_above_capacity_counts_queueing_closed_loop_hides(started):
    port = free_port()
    started.append(Service([sys.executable, '-c', SLOW_SERVER, str(port)], port))
    common = ('--port', port, '--framing', 'length-prefixed', '-c', 4, '-d', 2)
    closed, _ = load_json(*common)
    opened, err = load_json(*common, '--mode', 'fixed', '--qps', 2000)
    # 4 connections x 10 ms: about 400 qps whichever way it is driven
    assert closed['errors'] == 0 and opened['errors'] == 0
    assert 10e6 <= closed['latency_ns']['p99'] < 100e6, closed
    assert opened['achieved_qps'] < 0.5 * opened['offered_qps']
    # arrivals queue behind the service: the latest wait about a second
    assert opened['latency_ns']['p99'] > 10 * closed['latency_ns']['p99'], opened
    assert 'could not reach 2000 qps' in err


LOAD_FAILED = 4		# `ditto load`: the service failed the run
NO_ERRORS = dict.fromkeys(['refused', 'reset', 'closed', 'timeout', 'unparseable', 'error_reply',
                           'other'], 0)


class Misbehaving:
    """A server on 127.0.0.1 at a free port, in threads of this process:
    serve(conn, n) runs for the n-th accepted connection. close() stops
    accepting and closes every connection."""

    def __init__(self, serve):
        self.serve, self.conns, self.done = serve, [], threading.Event()
        self.sock = socket.create_server(('127.0.0.1', 0), backlog=128)
        self.sock.settimeout(0.05)	# so that the accept loop sees done
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        n = 0
        while not self.done.is_set():
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:		# stop_listening()
                return
            c.settimeout(None)
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c, n), daemon=True).start()
            n += 1

    def _serve(self, c, n):
        try:
            self.serve(c, n)
        except OSError:
            pass

    def stop_listening(self):
        # at once: a close would wait for the accept thread's poll, and
        # connections made meanwhile would be reset, not refused
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    def close(self):
        self.done.set()
        self.thread.join()
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


def never_answers(c, n):
    while c.recv(65536):
        pass


def resets(c, n):
    c.recv(65536)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    c.close()


def closes(c, n):
    c.recv(65536)	# read, so that the close is a FIN and not a reset
    c.close()


def talks_garbage(c, n):
    while c.recv(65536):
        c.sendall(b'garbage\r\n')


class Mixed:
    """RESP: of every 5 requests one closes its connection, one gets an
    error reply and three get +OK. One request per recv: the load has one
    outstanding per connection, and a GET is 30 bytes."""

    def __init__(self):
        self.lock, self.i = threading.Lock(), 0

    def __call__(self, c, n):
        while c.recv(65536):
            with self.lock:
                i, self.i = self.i, self.i + 1
            if i % 5 == 0:
                c.close()
                return
            c.sendall(b'-ERR no\r\n' if i % 5 == 1 else b'+OK\r\n')


@pytest.fixture
def misbehaving():
    servers = []

    def start(serve):
        servers.append(Misbehaving(serve))
        return servers[-1]
    yield start
    for s in servers:
        s.close()


def load_fails(*args, within):
    """`ditto load --json ARGS` that must exit 4 within `within` seconds:
    its result (printed all the same) and its error message."""
    t0 = time.monotonic()
    r = cli('load', '--json', *args, check=False, timeout=within + 30)
    took = time.monotonic() - t0
    assert r.returncode == LOAD_FAILED, (r.returncode, r.stdout, r.stderr)
    assert took < within, took
    return json.loads(r.stdout), r.stderr


def test_unanswered_requests_time_out_as_errors():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        s.listen(64)	# never accepted: connects succeed, nothing answers
        res, err = load_fails('--port', s.getsockname()[1], '--framing', 'resp', '-c', 2, '-d', 1,
                              '--timeout', 0.2, within=5)
    assert res['completed'] == 0 and res['errors'] >= 4
    assert res['errors_by_kind']['timeout'] == res['errors'], res
    assert 'timeout %d' % res['errors'] in err, err


def test_a_server_that_never_answers_fails_naming_timeouts(misbehaving):
    srv = misbehaving(never_answers)
    t0 = time.monotonic()
    r = cli('load', '--port', srv.port, '--framing', 'resp', '-d', 1, check=False, timeout=30)
    # the default answer timeout shrinks to the run: the first requests
    # waited all of it, and are timeouts, not quietly outstanding
    assert r.returncode == LOAD_FAILED and time.monotonic() - t0 < 5, r
    assert 'completed  0' in r.stdout and 'errors 8 (timeout 8)' in r.stdout, r.stdout
    assert 'no request to 127.0.0.1:%d was answered' % srv.port in r.stderr, r.stderr
    assert 'timeout 8' in r.stderr, r.stderr


def test_requests_against_a_server_that_never_answers_end_at_the_deadline(misbehaving):
    srv = misbehaving(never_answers)
    res, err = load_fails('--port', srv.port, '--framing', 'resp', '-n', 1000, '--deadline', 1.5,
                          within=5)
    assert 'deadline of 1.5 s passed with 0 of 1000 requests' in err, err
    # the requests outstanding at the deadline are its timeouts
    assert res['errors_by_kind']['timeout'] == res['errors'] == 8, res
    assert 'timeout 8' in err and res['elapsed_s'] <= 1.6, (res, err)


@pytest.mark.parametrize('serve,kind', [(resets, 'reset'), (closes, 'closed'),
                                        (talks_garbage, 'unparseable')])
def test_each_failure_is_counted_by_its_kind(misbehaving, serve, kind):
    srv = misbehaving(serve)
    res, err = load_fails('--port', srv.port, '--framing', 'resp', '-n', 20, '-c', 4, within=10)
    assert res['completed'] == 0 and res['errors'] == 20, res
    assert res['errors_by_kind'][kind] == 20, res
    assert '(20 failed: %s 20)' % kind in err, err


def test_refused_connection_is_a_clear_error():
    port = free_port()
    r = cli('load', '--port', port, '--framing', 'resp', check=False)
    assert r.returncode == LOAD_FAILED and not r.stdout
    assert '127.0.0.1:%d' % port in r.stderr and 'refused' in r.stderr, r.stderr


def test_refused_reconnects_are_counted_as_refused(misbehaving):
    """Both connections get their first request read, then the listener
    goes and they are closed: each reconnect is refused."""
    both = threading.Barrier(2, timeout=10)

    def serve(c, n):
        c.recv(65536)
        if both.wait() == 0:
            srv.stop_listening()
        both.wait()
        c.close()
    srv = misbehaving(serve)
    res, err = load_fails('--port', srv.port, '--framing', 'resp', '-c', 2, '-n', 10, within=10)
    assert res['errors_by_kind'] == dict(NO_ERRORS, closed=2, refused=2), res
    assert '(4 failed: refused 2, closed 2)' in err, err


def test_some_answers_and_some_errors_succeed_and_print_the_kinds(misbehaving):
    srv = misbehaving(Mixed())
    # every request reaches the server, so each run takes whole rounds of 5
    res, _ = load_json('--port', srv.port, '--framing', 'resp', '--write-share', 0, '-n', 200,
                       '-c', 4)
    assert res['completed'] == 120 and res['errors'] == 80, res
    assert res['errors_by_kind'] == dict(NO_ERRORS, closed=40, error_reply=40), res
    r = cli('load', '--port', srv.port, '--framing', 'resp', '--write-share', 0, '-n', 100,
            '-c', 4)
    assert 'completed  60' in r.stdout, r.stdout
    assert 'errors 40 (closed 20, error_reply 20)' in r.stdout, r.stdout


def test_bad_command_lines_are_usage_errors():
    for args in (['--framing', 'resp'], ['--port', '1', '--framing', 'smtp'],
                 ['--port', '1', '--framing', 'resp', '--mode', 'poisson'],
                 ['--port', '1']):
        assert cli('load', *args, check=False).returncode == 2, args


def test_ctrl_c_ends_the_run_and_still_reports(redis):
    p = subprocess.Popen([CLI, 'load', '--json', '--port', str(redis.port), '--framing', 'resp',
                          '-d', '30'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 0, err
    res = json.loads(out)
    assert res['completed'] > 0 and 0.5 < res['elapsed_s'] < 5


def test_human_summary_names_rate_and_percentiles(redis):
    r = cli('load', '--port', redis.port, '--framing', 'resp', '-n', 2000)
    assert 'completed  2000' in r.stdout and 'p99.9' in r.stdout, r.stdout


def test_python_binding_returns_the_result_dict(redis):
    res = ditto.load(redis.port, framing='resp', requests=3000, connections=4, write_share=0)
    assert res['completed'] == 3000 and res['errors'] == 0
    assert_sane_latency(res)
    with pytest.raises(ditto.DittoError) as e:
        ditto.load(free_port(), framing='resp')
    assert e.value.code == -errno.ECONNREFUSED


def test_python_binding_raises_load_error_with_the_result_and_counts_kinds(misbehaving):
    srv = misbehaving(never_answers)
    with pytest.raises(ditto.LoadError) as e:
        ditto.load(srv.port, framing='resp', connections=2, duration=0.5)
    assert e.value.code == -errno.EIO and 'timeout 2' in e.value.message, e.value
    assert e.value.result['completed'] == 0, e.value.result
    assert e.value.result['errors_by_kind'] == dict(NO_ERRORS, timeout=2), e.value.result
    with pytest.raises(ditto.LoadError) as e:
        ditto.load(srv.port, framing='resp', connections=2, requests=50, deadline=0.5)
    assert e.value.code == -errno.ETIMEDOUT and 'deadline of 0.5 s' in str(e.value), e.value
    # some answered: a result, its failures by kind
    mixed = misbehaving(Mixed())
    res = ditto.load(mixed.port, framing='resp', requests=100, connections=4, write_share=0)
    assert res['completed'] == 60, res
    assert res['errors_by_kind'] == dict(NO_ERRORS, closed=20, error_reply=20), res


def test_options_a_newer_caller_set_are_refused_and_bad_values_named():
    class Newer(ctypes.Structure):
        _fields_ = [('base', _lib.LoadgenOpts), ('extra', ctypes.c_uint64)]
    o = Newer(extra=1)
    o.base.sz, o.base.port, o.base.framing = ctypes.sizeof(Newer), free_port(), 3
    out = ctypes.c_void_p()
    assert _lib.lib.ditto_load_run(ctypes.byref(o.base), ctypes.byref(out)) == -_lib.EOPTS
    o.extra = 0		# zero trailing bytes are fine: then the port refuses
    assert _lib.lib.ditto_load_run(ctypes.byref(o.base), ctypes.byref(out)) == -errno.ECONNREFUSED
    assert not out.value
    with pytest.raises(ditto.DittoError) as e:
        ditto.load(1, framing='resp', mode='poisson')
    assert e.value.code == -errno.EINVAL and 'qps' in e.value.message


CLONE_MODELS = ['profiled-redis', 'profiled-memcached', 'random-1-resp', 'random-2-memcache-text',
                'random-3-memcache-binary', 'random-4-http1', 'random-5-length-prefixed',
                'random-6-raw']


def connections_served(model, most=4):
    """Connections the clone serves at once: a blocking model's pool of
    serving threads (each serves one connection at a time, as its
    original's did) when it has one, else `most`."""
    net = ditto.Model.load(model, validate=False).get('services[0].network')
    if net['io_model'] == 'blocking' and net['network_threads'] and net['processes'] > 1:
        return min(most, net['network_threads'])
    return most


@pytest.mark.parametrize('name', CLONE_MODELS[:1] if QUICK else CLONE_MODELS)
def test_clone_answers_its_model_framing_without_errors(tmp_path, started, name):
    model = os.path.join(CORPUS, name + '.msgpack')
    cli('synth', model, '-o', tmp_path / 'clone', '-q')
    clone = Clone(tmp_path / 'clone')
    started.append(clone)
    res, _ = load_json('--port', clone.port, '--model', model, '-d', 0.5, '-c',
                       connections_served(model))
    assert res['completed'] > 100 and res['errors'] == 0, res
    assert_sane_latency(res)


def http_status(status):
    """HTTP/1.1: every request on the connection answered with status."""
    def serve(c, n):
        while c.recv(65536):
            c.sendall(b'HTTP/1.1 %d X\r\nContent-Length: 2\r\n\r\nno' % status)
    return serve


@pytest.mark.parametrize('status', [404, 503])
def test_http_client_and_server_errors_are_error_replies(misbehaving, status):
    """A server with nothing at / answers 404 for next to no work: counted
    as a rate, it would compare a clone's pages with the original's
    refusals."""
    srv = misbehaving(http_status(status))
    res, err = load_fails('--port', srv.port, '--framing', 'http1', '-n', 20, '-c', 2, within=10)
    assert res['errors_by_kind'] == dict(NO_ERRORS, error_reply=20), res
    assert res['completed'] == 0, res


def test_http_path_is_the_request_target_and_a_bad_one_is_refused():
    """--path / ditto.load(path=): the GETs go to that target (a front whose
    / answers 404 is loaded where its clients go); a target with a space or
    a control character, which would split the request line, is refused."""
    import http.server
    seen = []

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def do_GET(self):
            seen.append(self.path)
            self.send_response(200 if self.path == '/page?x=1' else 404)
            self.send_header('Content-Length', '2')
            self.end_headers()
            self.wfile.write(b'ok')

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        port = srv.server_address[1]
        res = ditto.load(port, framing='http1', requests=20, connections=2, write_share=0,
                         path='/page?x=1')
        assert res['completed'] == 20 and res['errors'] == 0, res
        assert set(seen) == {'/page?x=1'}, set(seen)
        r = cli('load', '--json', '--port', port, '--framing', 'http1', '-n', '10', '-c', '1',
                '--write-share', '0', check=False)
        assert r.returncode == 4, r.stderr      # / answers 404: no request answered
        assert json.loads(r.stdout)['errors_by_kind']['error_reply'] == 10, r.stdout
        out, _ = load_json('--port', port, '--framing', 'http1', '-n', '10', '-c', '1',
                           '--write-share', '0', '--path', '/page?x=1')
        assert out['completed'] == 10 and out['errors'] == 0, out
        for bad in ('page', '/a b', '/a\r\nX: y'):
            with pytest.raises(ditto.DittoError) as ei:
                ditto.load(port, framing='http1', requests=1, path=bad)
            assert ei.value.code == -errno.EINVAL, bad
    finally:
        srv.shutdown()
        srv.server_close()
