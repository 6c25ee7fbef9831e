# SPDX-License-Identifier: MIT
"""ditto_measure() and `ditto measure` on real services: cachegrind rates of
a ground-truth server and of redis, with startup subtracted; the profile
backend's per-request syscalls; the cpu backend's chased loads; hardware
counters reported missing; and
the errors of services that are missing, never listen or die, none of
them left running."""

import ctypes
import errno
import json
import os
import socket

import pytest

import ditto
from ditto import _lib
from conftest import QUICK, SERVERS, ditto as cli, free_port, need

RATES = ('i1_miss_rate', 'd1_miss_rate', 'll_miss_rate', 'branch_mispredict_rate')
# Sanitized ground-truth servers cannot run under valgrind; redis could,
# but the sanitizer build keeps to the quick checks.
slow = pytest.mark.skipif(QUICK, reason='no cachegrind runs in the sanitizer build')


def srv_epoll(port, *extra):
    return [os.path.join(SERVERS, 'srv_epoll'), '--port', str(port), '--max-seconds', '120'] + \
        list(extra)


def gone(pid):
    """True when pid no longer runs (a zombie not yet reaped counts as gone)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')
    except FileNotFoundError:
        return True


def pid_wrapped(tmp_path, argv):
    """argv started through sh, which leaves its pid (kept by exec) in a file."""
    pidfile = tmp_path / 'service.pid'
    return pidfile, ['sh', '-c', 'echo $$ > %s; exec "$@"' % pidfile, 'sh'] + argv


def test_metrics_keep_order_and_replace_values():
    lib = _lib.lib
    m = ctypes.c_void_p()
    v = ctypes.c_double()
    name = ctypes.c_char_p()
    assert lib.ditto_metrics_new(ctypes.byref(m)) == 0
    try:
        for k, x in ((b'b', 2.0), (b'a', 1.0), (b'b', 3.0)):
            assert lib.ditto_metrics_set(m, k, x) == 0
        assert lib.ditto_metrics_count(m) == 2
        assert lib.ditto_metrics_entry(m, 0, ctypes.byref(name), ctypes.byref(v)) == 0
        assert (name.value, v.value) == (b'b', 3.0)
        assert lib.ditto_metrics_entry(m, 2, None, None) == -_lib.ENOTFOUND
        assert lib.ditto_metrics_get(m, b'c', ctypes.byref(v)) == -_lib.ENOTFOUND
        assert lib.ditto_metrics_set(m, b'c', float('nan')) == -errno.EINVAL
    finally:
        lib.ditto_metrics_free(m)


def test_unknown_option_bytes_are_refused():
    class Newer(ctypes.Structure):
        _fields_ = _lib.MeasureOpts._fields_ + [('future', ctypes.c_uint64)]

    load = _lib.make_opts(_lib.LoadgenOpts, port=1, framing=3)
    o = _lib.make_opts(Newer, load=ctypes.pointer(load), future=1)
    out = ctypes.c_void_p()
    rc = _lib.lib.ditto_measure(ctypes.cast(ctypes.byref(o), ctypes.POINTER(_lib.MeasureOpts)),
                                ctypes.byref(out))
    assert rc == -_lib.EOPTS and not out.value


@slow
def test_cachegrind_subtracts_startup_so_insts_per_request_do_not_depend_on_requests():
    need('valgrind')
    # A port each: the second service must not be probed while the first
    # one's port may still be in use (a CI run was refused mid-load).
    port = free_port()
    few = ditto.measure(srv_epoll(port), port, framing='length-prefixed', requests=500)
    port = free_port()
    many = ditto.measure(srv_epoll(port), port, framing='length-prefixed', requests=1500)
    for m in (few, many):
        assert m['insts_per_request'] > 0
        for r in RATES:
            assert 0 <= m[r] <= 1, (r, m)
        assert m['data_refs_per_request'] > 0 and m['branches_per_request'] > 0
    # Startup alone is hundreds of thousands of instructions: not
    # subtracted, it would weigh three times more per request in `few`.
    assert abs(few['insts_per_request'] / many['insts_per_request'] - 1) < 0.10, (few, many)


@slow
def test_cachegrind_on_redis_gives_plausible_rates():
    need('valgrind')
    server = need('redis-server')
    port = free_port()
    r = cli('measure', '--port', port, '--framing', 'resp', '-n', 2000, '--json', '--',
            server, '--port', port, '--save', '', '--appendonly', 'no')
    m = json.loads(r.stdout)
    # A GET or SET costs redis a few thousand instructions.
    assert 1000 < m['insts_per_request'] < 100000, m
    for k in RATES:
        assert 0 <= m[k] <= 1, (k, m)
    assert m['branch_mispredict_rate'] > 0 and m['d1_miss_rate'] > 0, m


@pytest.mark.root
def test_profile_sees_one_read_and_one_write_per_request():
    port = free_port()
    m = ditto.measure(srv_epoll(port), port, framing='length-prefixed', backends=('profile',),
                      requests=2000)
    # srv_epoll reads each frame once and answers with one write (plus an
    # end-of-file read per connection: 4 in 2000 requests).
    assert abs(m['read_calls_per_request'] - 1) < 0.02, m
    assert abs(m['write_calls_per_request'] - 1) < 0.02, m
    assert m['syscalls_per_request'] >= 2, m
    # At least the two 4-byte headers and the 128-byte response.
    assert m['socket_bytes_per_request'] >= 136, m


@pytest.mark.root
def test_profile_cpu_time_per_request_follows_the_work():
    """cpu_ns_per_request: every thread's CPU time per request, from the
    profiler's scheduler events; srv_epoll --work N does about 10 N
    instructions a request more (tests/servers/README.md)."""
    cpu = {}
    for work in (0, 20000):
        port = free_port()
        m = ditto.measure(srv_epoll(port, '--work', str(work)), port,
                          framing='length-prefixed', backends=('profile',), requests=2000)
        cpu[work] = m['cpu_ns_per_request']
    # 200,000 instructions take tens of microseconds on any host.
    assert cpu[0] > 0 and cpu[20000] > cpu[0] + 10000, cpu


# The sanitizer build's ground-truth servers run instrumented code (shadow
# checks around every access): their loads are not the plain build's.
plain_code = pytest.mark.skipif(QUICK, reason='the sanitizer build instruments the servers')


@pytest.mark.root
@plain_code
def test_cpu_backend_sees_the_work_loops_chased_table_reads():
    # srv_epoll --work: per step about 14 instructions and half a read of a
    # table whose address the loop loaded once (a chased load by the
    # profiler's definition: its base register came from a load). Without
    # the work the serving code reads far more and chases less.
    port = free_port()
    work = ditto.measure(srv_epoll(port, '--work', '300', '--work-bytes', '65536'), port,
                         framing='length-prefixed', backends=('cpu',))
    assert work['chased_load_share'] >= 0.8, work
    assert 0.02 < work['loads_per_instruction'] < 0.06, work
    assert 0.5 < work['raw_distance_log2_mean'] < 4, work
    port = free_port()
    plain = ditto.measure(srv_epoll(port), port, framing='length-prefixed', backends=('cpu',))
    assert plain['loads_per_instruction'] > 0.15, plain
    assert plain['chased_load_share'] < 0.6, plain


def counters_missing():
    ok, why = ditto.counters_available()
    if ok:
        pytest.skip('this host has hardware counters')
    assert why, 'ditto_counters_available() gives no reason'
    return why


def test_missing_counters_alone_fail_saying_why():
    why = counters_missing()
    port = free_port()
    r = cli('measure', '-p', port, '-f', 'length-prefixed', '-b', 'counters', '--',
            *srv_epoll(port), check=False)
    assert r.returncode == 1 and why in r.stderr, r.stderr


@slow
def test_missing_counters_beside_cachegrind_are_skipped_with_a_warning():
    counters_missing()
    need('valgrind')
    port = free_port()
    r = cli('measure', '-p', port, '-f', 'length-prefixed', '-b', 'counters,cachegrind',
            '-n', 200, '--json', '--', *srv_epoll(port))
    assert 'counters skipped' in r.stderr
    assert json.loads(r.stdout)['insts_per_request'] > 0


def test_missing_command_is_named():
    port = free_port()
    with pytest.raises(ditto.DittoError) as e:
        ditto.measure(['no-such-service-xyz'], port, framing='resp')
    assert e.value.code == -errno.ENOENT and 'no-such-service-xyz' in str(e.value)
    r = cli('measure', '-p', port, '-f', 'resp', '--', 'no-such-service-xyz', check=False)
    assert r.returncode == 1 and 'command not found' in r.stderr, r.stderr


def test_service_that_never_listens_times_out_and_is_stopped(tmp_path):
    need('valgrind')
    port = free_port()
    pidfile, argv = pid_wrapped(tmp_path, ['sleep', '30'])
    r = cli('measure', '-p', port, '-f', 'resp', '--startup-timeout', 2, '--', *argv,
            check=False, timeout=60)
    assert r.returncode == 1, r.stderr
    assert 'did not accept on 127.0.0.1:%d within 2 s' % port in r.stderr, r.stderr
    assert gone(int(pidfile.read_text()))


def test_service_that_exits_at_once_reports_its_status_and_output(tmp_path):
    port = free_port()
    with pytest.raises(ditto.DittoError) as e:
        ditto.measure(['false'], port, framing='resp')
    assert e.value.code == -errno.ECHILD and 'exited with status 1' in str(e.value)
    pidfile, argv = pid_wrapped(tmp_path, ['sh', '-c', 'echo bad option >&2; exit 3'])
    with pytest.raises(ditto.DittoError) as e:
        ditto.measure(argv, port, framing='resp', backends='cachegrind')
    assert 'exited with status 3 before accepting on 127.0.0.1:%d' % port in str(e.value)
    assert 'bad option' in str(e.value)
    assert gone(int(pidfile.read_text()))


@slow
def test_service_that_dies_during_the_load_is_reported(tmp_path):
    need('valgrind')
    port = free_port()
    pidfile, argv = pid_wrapped(tmp_path, srv_epoll(port)[:-2] + ['--max-seconds', '2'])
    with pytest.raises(ditto.DittoError) as e:
        ditto.measure(argv, port, framing='length-prefixed', requests=10 ** 9, duration=20)
    assert e.value.code == -errno.ECHILD and 'during the load' in str(e.value), str(e.value)
    assert gone(int(pidfile.read_text()))


def test_port_served_by_another_process_is_refused():
    port = free_port()
    with socket.socket() as s:
        s.bind(('127.0.0.1', port))
        s.listen(8)
        with pytest.raises(ditto.DittoError) as e:
            ditto.measure(srv_epoll(port), port, framing='length-prefixed')
    assert e.value.code == -errno.EADDRINUSE, str(e.value)
