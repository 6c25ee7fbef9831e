# SPDX-License-Identifier: MIT
"""No silent wrong answers (issue 18): what the CLI cannot do is refused
and what a profile could not learn is said, with an exit status a script
can act on, instead of exit 0 and a wrong or empty result."""

import os
import subprocess
import time

import pytest

import ditto
from conftest import free_port

CLI = os.environ.get('DITTO_CLI')
SERVERS = os.environ.get('DITTO_SERVERS_DIR') or os.path.join(
    os.environ['DITTO_CLI'].rsplit('/examples/', 1)[0], 'tests', 'servers')


def run(args, timeout=60):
    return subprocess.run([CLI] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)


def test_several_pids_are_never_the_last_one_alone(tmp_path):
    # Before: `--pid A --pid B` profiled B alone and exited 0. Now each is
    # a service (tests/graph), and one inside the other's tree is refused.
    parent = subprocess.Popen(['sh', '-c', 'sleep 30 & wait'])
    try:
        kids = []
        for _ in range(100):
            # From /proc: procps tools hang under a sanitizer build's preload.
            with open('/proc/%d/task/%d/children' % (parent.pid, parent.pid)) as f:
                kids = f.read().split()
            if kids:
                break
            time.sleep(0.05)
        r = run(['profile', '--pid', parent.pid, '--pid', kids[0], '-d', '1', '-o',
                 tmp_path / 'out'])
    finally:
        for kid in kids:
            os.kill(int(kid), 9)
        parent.kill()
        parent.wait()
    assert r.returncode == 1, r.stderr
    assert b'descends from %d' % parent.pid in r.stderr, r.stderr
    assert not (tmp_path / 'out').exists()
    # Nor is the profiler's own process tree ever a target.
    r = run(['profile', '--pid', os.getpid(), '-d', '1', '-o', tmp_path / 'out'])
    assert r.returncode == 1 and b'ancestors' in r.stderr, r.stderr


def test_clone_of_several_pids_never_traces_the_profiler(tmp_path):
    """Several --pid clone a graph (tests/synth/test_graph_tree.py); the
    profiler's own process tree is refused there too, and nothing is
    written."""
    me = os.getpid()
    r = run(['clone', '--pid', me, '--pid', os.getppid(), '-d', '1', '-o', tmp_path / 'out'])
    assert r.returncode == 1, r.stderr
    assert b'ancestors' in r.stderr and b'does not trace itself' in r.stderr, r.stderr
    assert not (tmp_path / 'out').exists()


class EpollServer:
    """srv_epoll on 127.0.0.1, stopped by PID at the end."""

    def __init__(self, max_seconds=60, response_bytes=None):
        self.port = free_port()
        self.response_bytes = response_bytes
        extra = ['--response-bytes', str(response_bytes)] if response_bytes else []
        self.proc = subprocess.Popen([os.path.join(SERVERS, 'srv_epoll'), '--port',
                                      str(self.port), '--max-seconds', str(max_seconds)] + extra,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout.readline().strip() == b'ready'

    def load(self, seconds):
        """srv_client, the ground-truth load of the profile tests, for seconds."""
        return subprocess.Popen([os.path.join(SERVERS, 'srv_client'), '--port', str(self.port),
                                 '--connections', '2', '--requests', str(10 ** 7),
                                 '--request-bytes', '100', '--max-seconds', str(seconds)] +
                                (['--response-bytes', str(self.response_bytes)]
                                 if self.response_bytes else []),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdout.close()


@pytest.fixture
def srv():
    s = EpollServer()
    yield s
    s.stop()


IDLE_WARNING = b'no request was counted in the'


def test_an_idle_window_is_exit_4_with_a_warning_and_the_model_is_written(tmp_path, srv):
    out = tmp_path / 'idle.msgpack'
    r = run(['profile', '--pid', srv.proc.pid, '-d', '1', '-W', '0', '-q', '-o', out])
    assert r.returncode == 4, r.stderr
    assert IDLE_WARNING in r.stderr, r.stderr
    assert b'network.io_model and framing could not be inferred' in r.stderr, r.stderr
    assert b'load the service while it is profiled' in r.stderr, r.stderr
    assert b'exit status 4' in r.stderr and b'--allow-idle' in r.stderr, r.stderr
    m = ditto.Model.load(str(out))
    assert m.get('services[0].network.io_model') == 'unknown'
    assert m.get('services[0].requests.count') == 0


def test_allow_idle_makes_an_idle_window_exit_0_still_with_its_warning(tmp_path, srv):
    out = tmp_path / 'idle.msgpack'
    r = run(['profile', '--pid', srv.proc.pid, '-d', '1', '-W', '0', '-q', '--allow-idle',
             '-o', out])
    assert r.returncode == 0, r.stderr
    assert IDLE_WARNING in r.stderr, r.stderr
    assert out.exists()


def test_a_loaded_window_exits_0_without_the_idle_warning(tmp_path):
    srv = EpollServer(response_bytes=4096)
    load = srv.load(6)
    try:
        r = run(['profile', '--pid', srv.proc.pid, '-d', '1', '-W', '0', '-q', '-o',
                 tmp_path / 'm'])
    finally:
        load.kill()
        load.wait(10)
        srv.stop()
    assert r.returncode == 0, r.stderr
    assert IDLE_WARNING not in r.stderr and b'could not be inferred' not in r.stderr, r.stderr
    m = ditto.Model.load(str(tmp_path / 'm'))
    assert m.get('services[0].network.io_model') == 'epoll'
    # Every response is one write of 4100 bytes (a 4-byte length, then
    # 4096): the exact totals the profiler now keeps give 4100 B a call,
    # where the log2 bucket's midpoint said 6 KiB; `ditto model show`
    # prints the exact mean.
    writes = [c for c in m.service(0).syscalls
              if c.fd_kind == 'tcp' and c.name in ('write', 'sendto', 'send', 'writev')]
    assert writes, m.service(0).syscalls
    w = max(writes, key=lambda c: c.calls)
    assert w.ret_total == 4100 * w.ret.total, (w.ret_total, w.ret.total)
    assert w.size_total == 4100 * w.size.total
    out = run(['model', 'show', tmp_path / 'm']).stdout.decode()
    row = next(l for l in out.splitlines()
               if ' %s ' % w.name in l and ' tcp ' in l and l.split()[0] == w.thread_class)
    assert row.count(' 4.0 KiB') == 2, row


def test_clone_of_an_idle_service_is_exit_4_keeps_the_model_and_builds_nothing(tmp_path, srv):
    r = run(['clone', '--pid', srv.proc.pid, '-d', '1', '-W', '0', '-q', '-o',
             tmp_path / 'clone'])
    assert r.returncode == 4, r.stderr
    assert IDLE_WARNING in r.stderr and b'no clone made' in r.stderr, r.stderr
    assert (tmp_path / 'clone.msgpack').exists()
    assert not (tmp_path / 'clone').exists()
    assert b'--allow-idle' in run(['clone', '--help']).stdout


def test_python_profile_names_the_gaps_and_raises_only_when_asked(srv):
    for allow in (True, False):
        with ditto.Profile(duration=1, cpu_windows=-1, allow_idle=allow) as p:
            p.attach(srv.proc.pid)
            p.run()
            if allow:
                m = p.finish()
            else:
                with pytest.raises(ditto.IdleProfileError) as e:
                    p.finish()
                m = e.value.model
                assert e.value.gaps == p.gaps
            assert p.idle and p.gaps == ('no_requests', 'io_model', 'framing')
            assert m.get('services[0].framing') == 'unknown'
    load = srv.load(6)
    try:
        with ditto.Profile(duration=1, cpu_windows=-1, allow_idle=False) as p:
            p.attach(srv.proc.pid)
            p.run()
            p.finish()
            assert not p.idle and p.gaps == ()
    finally:
        load.kill()
        load.wait(10)


def test_the_idle_class_warning_of_cpu_windows_names_the_class(tmp_path):
    # A sleeping process: its one thread class stays blocked in every
    # window; the warning once said "thread class 0".
    proc = subprocess.Popen(['sleep', '60'])
    try:
        r = run(['profile', '--pid', proc.pid, '-d', '1', '-W', '3', '-q', '--allow-idle',
                 '-n', 'sleeper', '-o', tmp_path / 'm'])
    finally:
        proc.kill()
        proc.wait(10)
    assert r.returncode == 0, r.stderr
    names = [t['name'] for t in ditto.Model.load(str(tmp_path / 'm')).get('services[0].threads')]
    line = [l for l in r.stderr.decode().splitlines() if 'stayed blocked' in l]
    assert line, r.stderr
    assert any("thread class '%s'" % n in line[0] for n in names), line
    assert 'thread class 0' not in line[0]
