# SPDX-License-Identifier: MIT
"""`ditto clone` of MariaDB under sysbench oltp_read_only, driven by
sysbench itself.

A private server (mariadb-install-db in a temporary directory, its own
socket, 127.0.0.1 on a free port, grant tables skipped so any user is
taken) is filled by `sysbench oltp_read_only prepare` and profiled and
cloned under `sysbench oltp_read_only run`. The model's framing must be
mysql; the clone must take oltp_read_only with prepared statements (the
default) and without (--db-ps-mode=disable) with no error; its response
bytes per request, profiled under the same load, stay within a loose
bound of the original's. A window that opens on connections made before
it (no handshake seen, MariaDB reading each packet's header apart) still
finds the framing. MariaDB is stopped by its PID; the system's own
instance and port 3306 are never touched."""

import json
import math
import os
import subprocess
import time

import pytest

import ditto as d
import mariadb_server
from compare import clone_service, per_request, profile_clone, rel
from conftest import Clone, ditto
from mariadb_server import Server, sysbench_argv

# A real database under sysbench for minutes: the plain build's pass (the
# sanitizer pass checks the library on the other clone tests).
pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

# Response bytes per request, clone against original, within the issue's
# 1%. A request here is one command packet: point selects of one row (~200
# bytes), ranges of 100 rows (~13 KiB), BEGIN and COMMIT's OK packets. Each
# reply draws from the model's histogram and the connection carries what it
# sent beyond its draws (rt_my_fit): measured 2458.4 against 2463.9 bytes.
# Results drawn among the buckets at least their own size came out 8%
# large (2669.6 against 2463.3). The clone's mean is that of its draws,
# independent per reply, where sysbench's mix of queries repeats (two
# profiles of MariaDB: 2427.8 and 2428.2): with ranges of 13 KiB among
# replies of 200 bytes, the mean of a profile's 70,000 draws has a
# standard error of 0.7-0.8% (draw_spread(); once 1.2% off in CI), so the
# bound is at least three of them.
RESP_BOUND = 0.01


def draw_spread(model):
    """The relative standard error of the mean response size of a
    profile: its histogram's spread (bucket midpoints) over the square
    root of its requests."""
    b = d.Model.load(model).hist('services[0].requests.response_bytes').buckets
    n = sum(c for _, _, c in b)
    mu = sum((lo + hi) / 2 * c for lo, hi, c in b) / n
    var = sum(((lo + hi) / 2 - mu) ** 2 * c for lo, hi, c in b) / n
    return math.sqrt(var / n) / mu


def tools():
    """The programs this test needs, or a reason to skip."""
    paths, missing = mariadb_server.tools()
    if missing:
        pytest.skip('%s not installed: scripts/bootstrap.sh installs mariadb-server and sysbench'
                    % ', '.join(missing))
    return paths


def sysbench(bins, port, *args):
    """A bounded run: its transactions per second; fails on any error."""
    return mariadb_server.sysbench_rates(bins, port, *args)[0]


def ok_reads(path):
    """Socket reads of the serving class that found bytes, per request."""
    m = d.Model.load(path)
    n = m.get('services[0].requests.count')
    return sum(c['calls'] - c.get('errors', 0) for c in m.get('services[0].syscalls')
               if c['thread_class'] == 'network' and c['fd_kind'] == 'tcp' and
               c['name'] in ('read', 'recvfrom', 'readv', 'recvmsg')) / n


def load_ok(args):
    """`ditto load` of 2000 requests: all answered, none failed."""
    r = ditto('load', '--json', '-n', 2000, '-c', 4, *args)
    res = json.loads(r.stdout)
    assert res['completed'] == 2000 and res['errors'] == 0, res


@pytest.fixture
def server(started):
    bins = tools()
    s = Server(bins)
    started.append(s)
    return bins, s


def test_mysql_clone_answers_sysbench(tmp_path, server, started):
    bins, srv = server
    tree = tmp_path / 'mysql-clone'
    orig = clone_service(srv.pid, tree, sysbench_argv(bins, srv.port, seconds=30))
    tps_orig = sysbench(bins, srv.port)
    # ditto's own load speaks MySQL too (handshake as root, COM_QUERY):
    # the original and, below, its clone answer each query without error
    load_ok(['--framing', 'mysql', '--port', srv.port])
    srv.stop()
    assert d.Model.load(orig).get('services[0].framing') == 'mysql'
    assert os.access(tree / 'clone', os.X_OK)

    clone = Clone(tree)
    started.append(clone)
    load_ok(['--model', orig, '--port', clone.port])
    for mode in ('auto', 'disable'):
        tps = sysbench(bins, clone.port, '--db-ps-mode=' + mode)
        print('sysbench oltp_read_only --db-ps-mode=%s: clone %.0f tps' % (mode, tps))
    print('sysbench oltp_read_only --db-ps-mode=auto: original %.0f tps' % tps_orig)

    cm = profile_clone(clone, 'mysql', str(tmp_path / 'clone.msgpack'),
                       sysbench_argv(bins, clone.port, seconds=30))
    assert clone.stop() == 0
    _, req_o, resp_o = per_request(orig)
    _, req_c, resp_c = per_request(cm)
    print('bytes per request: original %.1f in, %.1f out; clone %.1f in, %.1f out' %
          (req_o, resp_o, req_c, resp_c))
    assert d.Model.load(cm).get('services[0].framing') == 'mysql'
    bound = max(RESP_BOUND, 3 * draw_spread(cm))
    print('response bytes bound %.2f%%' % (100 * bound))
    assert rel(resp_o, resp_c) <= bound, ('response bytes', resp_o, resp_c, bound)
    # MariaDB reads each packet's 4-byte header alone, then its payload:
    # two reads that find bytes per request, in the clone too
    ok_o, ok_c = ok_reads(orig), ok_reads(cm)
    print('reads that found bytes per request: original %.3f, clone %.3f' % (ok_o, ok_c))
    assert ok_o >= 1.9 and rel(ok_o, ok_c) <= 0.05, (ok_o, ok_c)


@pytest.mark.parametrize('mode', ['auto', 'disable'])
def test_mysql_recognised_mid_connection(tmp_path, server, mode):
    """sysbench connected before the window: its first bytes in the window
    are a COM_STMT_EXECUTE or a COM_QUERY, read as a 4-byte header and
    then the payload."""
    bins, srv = server
    # long enough for the profiler's start on a loaded host; stopped after
    load = subprocess.Popen(sysbench_argv(bins, srv.port, '--db-ps-mode=' + mode, seconds=60),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        out = str(tmp_path / 'mid.msgpack')
        ditto('profile', '--pid', srv.pid, '--duration', 2, '--cpu-windows', 1, '--quiet', '-o', out)
    finally:
        load.terminate()
        load.wait(60)
    m = d.Model.load(out)
    assert not m.get('services[0].requests.connections')   # the premise
    assert m.get('services[0].framing') == 'mysql'
