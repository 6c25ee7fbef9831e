# SPDX-License-Identifier: MIT
"""Fixtures of the profiler's integration tests: real services on 127.0.0.1
with bounded loads, started and stopped by PID.

Run by `meson test --suite profile` (root: CI runs as root)."""

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

import ditto

# One stepping mode per build for the longest tests (tests/cpu/step_split.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'cpu'))
import step_split  # noqa: E402


# Under a sanitizer build this interpreter runs with the sanitizer runtimes
# preloaded; the services, load generators and tools it starts must not.
# SANITIZER_ENV keeps them for a child that loads libditto itself.
SANITIZER_ENV = {_var: os.environ.pop(_var) for _var in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')
                 if _var in os.environ}


def pytest_configure(config):
    config.addinivalue_line('markers', step_split.MARKER)


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason='profiling needs root (CAP_BPF, CAP_PERFMON)')
        for item in items:
            item.add_marker(skip)


def free_port():
    """A port nothing listens on now, from a range tests do not share."""
    for _ in range(100):
        port = random.randint(21000, 29000)
        with socket.socket() as s:
            try:
                s.bind(('127.0.0.1', port))
                return port
            except OSError:
                continue
    raise RuntimeError('no free port')


def wait_port(port, proc, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('server exited with %d before listening' % proc.returncode)
        with socket.socket() as s:
            if s.connect_ex(('127.0.0.1', port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError('server did not listen on %d' % port)


def stop(proc):
    """Stop a server by its PID: SIGTERM, then SIGKILL after 5 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def need(program):
    path = shutil.which(program)
    if not path:
        pytest.fail('%s is missing: scripts/bootstrap.sh installs it' % program)
    return path


class Server:
    def __init__(self, argv, port):
        self.port = port
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_port(port, self.proc)
        except Exception:
            stop(self.proc)
            raise

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        stop(self.proc)


@pytest.fixture
def server_factory():
    started = []

    def start(argv, port):
        s = Server(argv, port)
        started.append(s)
        return s
    yield start
    for s in started:
        s.stop()


def profile_during(pid, load_argv, duration=3.0, delay=0.5, **kw):
    """Profile pid for duration seconds while load_argv runs (started after
    delay s, bounded by itself); returns (model, load's CompletedProcess)."""
    # CPU windows have their own tests (tests/profile/test_cpu_services.py).
    kw.setdefault('cpu_windows', -1)
    with ditto.Profile(duration=duration, **kw) as p:
        p.attach(pid)
        t0 = time.monotonic()
        while time.monotonic() - t0 < delay:
            p.step(50)
        load = subprocess.Popen(load_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while p.step(100):
            pass
        out, err = load.communicate(timeout=60)
        model = p.finish()
    return model, subprocess.CompletedProcess(load_argv, load.returncode, out, err)


def thread_classes(model, svc=0):
    """{role: [(count, io_model), ...]} of service svc."""
    roles = {}
    threads = model.get('services[%d].threads' % svc)
    for t in threads:
        roles.setdefault(t['role'], []).append((t['count'], t['io_model']))
    return roles


def per_request(model, thread_class, name, fd, svc=0):
    req = model.get('services[%d].requests.count' % svc)
    calls = model.get('services[%d].syscalls[%s:%s:%s].calls' % (svc, thread_class, name, fd))
    return calls / req
