# SPDX-License-Identifier: MIT
"""Faults around CPU windows: no such process, missing privileges, a thread
that exits mid-window, a killed or interrupted profiler, instructions the
decoder does not know, a target in another mount namespace. The target is
never left stopped, traced or pinned to one CPU."""

import errno
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import ditto
from conftest import CLI, cpu_profile, gt_path, proc_status

# Every test runs under each stepping mechanism (conftest.step_mode).
pytestmark = pytest.mark.usefixtures('step_mode')


def nobody_dir(tmp_path):
    """A folder user nobody can write in and reach (pytest's own base is
    root's alone): the output is writable, the capability is what lacks."""
    d = tmp_path
    while str(d) != '/':
        os.chmod(d, os.stat(d).st_mode | 0o711)
        d = d.parent
    os.chmod(tmp_path, 0o777)
    return tmp_path


def untouched(pid, cpus_before):
    st = proc_status(pid)
    assert st['TracerPid'] == '0'
    assert st['State'][0] in 'RS', st['State']
    assert st['Cpus_allowed_list'] == cpus_before


def test_pid_that_does_not_exist_is_esrch():
    with pytest.raises(ditto.DittoError) as e:
        ditto.profile_cpu(4194000)
    assert e.value.code == -errno.ESRCH
    assert '4194000' in e.value.message


def test_without_ptrace_permission_the_cause_is_named(target, tmp_path):
    setpriv = shutil.which('setpriv')
    if not setpriv:
        pytest.fail('setpriv (util-linux) is missing')
    t = target('gt_mix', 'add')
    out = nobody_dir(tmp_path) / 'm'
    r = subprocess.run([setpriv, '--reuid=65534', '--regid=65534', '--clear-groups',
                        '--inh-caps=-all', CLI, 'profile', '--cpu-only', '--pid', str(t.pid),
                        '-W', '1', '-o', str(out)], stderr=subprocess.PIPE, timeout=30)
    msg = r.stderr.decode()
    assert r.returncode != 0
    assert 'CAP_SYS_PTRACE' in msg and str(t.pid) in msg, msg
    assert not out.exists()
    assert t.alive() and proc_status(t.pid)['TracerPid'] == '0'


@pytest.mark.parametrize('what', ['thread', 'process'])
def test_thread_exiting_mid_window_keeps_what_was_stepped(what):
    proc = subprocess.Popen([gt_path('gt_exit'), what], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b'ready'
        tid = int(proc.stdout.readline())
        t0 = time.monotonic()
        m = ditto.profile_cpu(proc.pid, tids=[tid], windows=3, window_insts=10 ** 7,
                              spacing=0.05)
        assert time.monotonic() - t0 < 10, 'the window should end with the thread'
        cpu = m.get('services[0].cpu[0]')
        assert 0 < cpu['instructions'] < 10 ** 7
        m.validate()
        if what == 'thread':
            assert proc.stdout.readline().strip() == b'joined'
            assert proc.poll() is None
            assert proc_status(proc.pid)['TracerPid'] == '0'
        else:
            assert proc.wait(10) == 0, 'the target ran to its normal end'
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def test_killed_profiler_leaves_the_target_running_untraced_unpinned(target, tmp_path):
    t = target('gt_mix', 'add')
    cpus = proc_status(t.pid)['Cpus_allowed_list']
    cli = subprocess.Popen([CLI, 'profile', '--cpu-only', '--pid', str(t.pid), '-W', '1',
                            '-I', str(10 ** 8), '-q', '-o', str(tmp_path / 'm')])
    time.sleep(1.5)
    assert proc_status(t.pid)['TracerPid'] != '0', 'a window should be running'
    cli.kill()
    cli.wait(10)
    time.sleep(0.5)
    assert t.alive()
    untouched(t.pid, cpus)


def test_sigint_ends_the_window_and_writes_partial_results(target, tmp_path):
    t = target('gt_mix', 'load')
    cpus = proc_status(t.pid)['Cpus_allowed_list']
    out = tmp_path / 'm'
    cli = subprocess.Popen([CLI, 'profile', '--cpu-only', '--pid', str(t.pid), '-W', '1',
                            '-I', str(10 ** 8), '-q', '-o', str(out)], stderr=subprocess.PIPE)
    time.sleep(1.5)
    cli.send_signal(signal.SIGINT)
    _, err = cli.communicate(timeout=20)
    assert cli.returncode == 0, err
    m = ditto.Model.load(str(out))
    assert 0 < m.get('services[0].cpu[0].instructions') < 10 ** 8
    assert t.alive()
    untouched(t.pid, cpus)


def test_undecodable_instructions_are_counted_and_stepping_goes_on(target):
    with open('/proc/cpuinfo') as f:
        if ' gfni' not in f.read():
            pytest.skip('this CPU has no GFNI instructions')
    t = target('gt_mix', 'gfni')
    _, cpu = cpu_profile(t.pid, windows=1, insts=12000)
    assert cpu['instructions'] == 12000
    assert abs(cpu['undecoded'] / cpu['instructions'] - 4 / 6) < 0.01


def test_target_in_another_mount_namespace_is_read_through_its_memory(tmp_path):
    unshare = shutil.which('unshare')
    if not unshare:
        pytest.fail('unshare (util-linux) is missing')
    # The binary lives on a tmpfs mounted only inside the target's namespace.
    script = ('mkdir -p {d} && mount -t tmpfs ditto {d} && cp {p} {d}/gt && exec {d}/gt load'
              .format(d=tmp_path / 'private', p=gt_path('gt_mix')))
    proc = subprocess.Popen([unshare, '-m', '--propagation', 'private', 'sh', '-c', script],
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b'ready'
        assert not os.path.exists(tmp_path / 'private' / 'gt')
        m, cpu = cpu_profile(proc.pid, windows=1, insts=14000)
        assert abs(m.service(0).cpu[0].mix.get('mov.rm.r.64.base', 0) / 14000 - 12 / 14) < 0.01
        assert cpu['undecoded'] == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_thread_traced_by_someone_else_names_its_tracer(target, tmp_path):
    # As root the cause is never a missing permission: a thread has one tracer.
    t = target('gt_mix', 'add')
    strace = subprocess.Popen([shutil.which('strace'), '-p', str(t.pid), '-o', os.devnull],
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while proc_status(t.pid)['TracerPid'] == '0' and time.monotonic() < deadline:
            time.sleep(0.02)
        with pytest.raises(ditto.DittoError) as e:
            cpu_profile(t.pid, windows=1)
        assert e.value.code == -errno.EBUSY
        assert 'already traced by process %d' % strace.pid in e.value.message
        assert 'CAP_SYS_PTRACE' not in e.value.message
    finally:
        strace.terminate()
        strace.wait(10)
    assert t.alive()
