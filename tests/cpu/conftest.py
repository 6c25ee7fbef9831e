# SPDX-License-Identifier: MIT
"""Fixtures of the CPU profiler's tests: ground-truth programs started,
waited for ("ready") and stopped by PID. Needs root (ptrace of processes
this user did not start, CAP_SYS_PTRACE under Yama)."""

import os
import signal
import subprocess
import time

import pytest

import ditto
import step_split

GT_DIR = os.environ.get('DITTO_CPU_GT_DIR', '.')
CLI = os.environ.get('DITTO_CLI')

for _var in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS'):
    os.environ.pop(_var, None)


def pytest_configure(config):
    config.addinivalue_line('markers', step_split.MARKER)


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason='CPU windows of foreign processes need root')
        for item in items:
            item.add_marker(skip)


def gt_path(name):
    return os.path.join(GT_DIR, name)


class Target:
    """A ground-truth program in its steady loop."""

    def __init__(self, argv, preexec=None):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, preexec_fn=preexec)
        line = self.proc.stdout.readline()
        if line.strip() != b'ready':
            self.stop()
            raise RuntimeError('%s did not start: %r' % (argv, line))
        # "ready" is printed just before the loop: let the write return.
        time.sleep(0.2)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)
        self.proc.stdout.close()


@pytest.fixture
def target():
    started = []

    def start(name, *args, preexec=None):
        t = Target([gt_path(name)] + [str(a) for a in args], preexec)
        started.append(t)
        return t
    yield start
    for t in started:
        t.stop()


@pytest.fixture(params=['breakpoint', 'syscall_stops'])
def step_mode(request, monkeypatch):
    """Each stepping mechanism in turn, forced through DITTO_STEP_MODE (so
    the CLI and the library see it too). The breakpoint one is skipped on
    hosts whose debug registers never fire; the fallback runs everywhere."""
    step_split.split_skip(request, request.param)
    if request.param == 'breakpoint' and not ditto.breakpoints_work():
        pytest.skip('hardware breakpoints do not fire on this host')
    monkeypatch.setenv('DITTO_STEP_MODE', request.param)
    return request.param


def cpu_profile(pid, windows=2, insts=20000, **kw):
    """Windows on pid's threads; returns (model, its cpu entry as a dict).
    Every window used the mechanism DITTO_STEP_MODE forces, if it does."""
    m = ditto.profile_cpu(pid, windows=windows, window_insts=insts, spacing=0.05, **kw)
    cpu = m.get('services[0].cpu[0]')
    forced = os.environ.get('DITTO_STEP_MODE')
    if forced and 'step_mode' not in kw and cpu['windows']:
        assert cpu['stepping'] == {forced: cpu['windows']}
    return m, cpu


def buckets(hist):
    """[(lo, hi, count)] of a histogram dict."""
    return [(b['lo'], b['hi'], b['count']) for b in hist['buckets']]


def share(hist, pred):
    """Share of the histogram's count in buckets whose (lo, hi) satisfy pred."""
    total = sum(c for _, _, c in buckets(hist))
    return sum(c for lo, hi, c in buckets(hist) if pred(lo, hi)) / total if total else 0.0


def proc_status(pid):
    fields = {}
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            k, _, v = line.partition(':')
            fields[k] = v.strip()
    return fields
