# SPDX-License-Identifier: MIT
"""SIGKILL at random instants of CPU windows (seizing, stepping, running
over a system call, between windows) to the profiler's whole process group
(a shell's job kill, a terminal's Ctrl-\\, a container runtime signalling
the group) and to the profiler alone: the target is left alive, untraced,
with its CPU affinity, and goes on doing its work, every time. SIGKILL to
the stepping process itself cannot be survived by a thread it is stepping
(profile.h): that death is reported as an error, never as a result."""

import os
import random
import signal
import subprocess
import time

import pytest

from conftest import CLI, gt_path, proc_status

# Every test runs under each stepping mechanism (conftest.step_mode).
pytestmark = pytest.mark.usefixtures('step_mode')

# Trials per case; DITTO_KILL_TRIALS=N runs more (the suite keeps it short).
TRIALS = int(os.environ.get('DITTO_KILL_TRIALS', '10'))


def start(*args):
    proc = subprocess.Popen([gt_path('gt_syscall')] + list(args), stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b'ready'
    return proc


def tracer_of(cli):
    """The stepping child of a `ditto profile` process, once it exists."""
    for _ in range(200):
        with open('/proc/%d/task/%d/children' % (cli.pid, cli.pid)) as f:
            kids = f.read().split()
        if kids:
            return int(kids[0])
        time.sleep(0.005)
    raise AssertionError('no stepping process appeared')


def stepping_process_of(cli, target):
    """The child of a `ditto profile` process that traces target: in
    breakpoint mode the first child may be the throwaway one that checks
    whether breakpoints fire (step_mode.c), gone within milliseconds (a CI
    run killed it: ESRCH)."""
    for _ in range(1000):
        with open('/proc/%d/task/%d/children' % (cli.pid, cli.pid)) as f:
            kids = {int(k) for k in f.read().split()}
        tracer = int(proc_status(target)['TracerPid'])
        if tracer in kids:
            return tracer
        time.sleep(0.002)
    raise AssertionError('no child of the profiler traced the target')


def profile(pid, out):
    # Short windows close together: a random instant falls in any phase.
    return subprocess.Popen([CLI, 'profile', '--cpu-only', '--pid', str(pid), '--tid',
                             str(pid), '-W', '1000', '-I', '3000', '-S', '0.01', '-q', '-o',
                             str(out)], start_new_session=True, stderr=subprocess.PIPE)


def released(pid, cpus, timeout=3.0):
    """The target is untraced (the surviving tracer ends its window within
    a step) and keeps its affinity."""
    deadline = time.monotonic() + timeout
    while proc_status(pid)['TracerPid'] != '0' and time.monotonic() < deadline:
        time.sleep(0.02)
    st = proc_status(pid)
    assert st['TracerPid'] == '0'
    assert st['Cpus_allowed_list'] == cpus


def finish(proc):
    """Stop the target and read its own verdict on its loop."""
    proc.send_signal(signal.SIGTERM)
    out = proc.stdout.read().decode().split()
    assert proc.wait(10) == 0 and out[0] == 'ok', out
    proc.stdout.close()
    return int(out[1])


@pytest.mark.parametrize('what', ['calls', 'block'])
@pytest.mark.parametrize('victim', ['group', 'profiler'])
def test_sigkill_at_any_instant_leaves_the_target_unharmed(tmp_path, what, victim):
    rng = random.Random(what + victim)
    for trial in range(TRIALS):
        t = start(what)
        cpus = proc_status(t.pid)['Cpus_allowed_list']
        try:
            cli = profile(t.pid, tmp_path / 'm')
            tracer_of(cli)
            time.sleep(rng.uniform(0.0, 0.6))
            if victim == 'group':
                os.killpg(cli.pid, signal.SIGKILL)
            else:
                cli.kill()
            cli.wait(10)
            assert t.poll() is None, 'trial %d: the target died (%s)' % (trial, t.returncode)
            released(t.pid, cpus)
            assert finish(t) > 0
        finally:
            if t.poll() is None:
                t.kill()
                t.wait()


def test_a_killed_stepping_process_is_an_error_not_a_result(tmp_path):
    t = start('calls')
    try:
        out = tmp_path / 'm'
        cli = profile(t.pid, out)
        stepping_process_of(cli, t.pid)
        time.sleep(0.3)
        os.kill(stepping_process_of(cli, t.pid), signal.SIGKILL)
        _, err = cli.communicate(timeout=30)
        assert cli.returncode != 0
        assert b'killed by signal 9' in err, err
    finally:
        t.kill()
        t.wait()
