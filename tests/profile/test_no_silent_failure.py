# SPDX-License-Identifier: MIT
"""Nothing fails silently: a command that cannot run, an output path that
cannot be written (refused before the window, not after it), a kernel
thread, SIGTERM or SIGHUP or a cut-short Ctrl-C during the system window
(the profile ends promptly, without CPU windows, and still writes its
model), and a target that exits during its CPU windows."""

import os
import signal
import subprocess
import sys
import time

import pytest

import ditto
from conftest import free_port, need

CLI = os.environ.get('DITTO_CLI')


def run(args, timeout=30):
    return subprocess.run([CLI] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def test_a_command_that_cannot_run_is_an_error_and_no_model(tmp_path):
    out = tmp_path / 'm'
    r = run(['profile', '-d', '5', '-o', str(out), '--', str(tmp_path / 'no-such-command')])
    assert r.returncode != 0
    assert b'cannot run' in r.stderr and b'No such file' in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize('cpu_only', [False, True])
def test_an_output_that_cannot_be_written_is_refused_before_the_window(tmp_path, cpu_only):
    t0 = time.monotonic()
    args = ['profile', '--pid', str(os.getpid()), '-d', '30', '-o',
            str(tmp_path / 'missing' / 'm')] + (['--cpu-only'] if cpu_only else [])
    r = run(args)
    assert time.monotonic() - t0 < 10, 'refused only after the window'
    assert r.returncode != 0 and b'cannot write the model there' in r.stderr, r.stderr


def test_a_writable_output_check_leaves_no_file_behind(tmp_path):
    # A profile that then fails for another reason (a kernel thread) leaves
    # no empty file where the model would have gone.
    out = tmp_path / 'm'
    r = run(['profile', '--pid', '2', '-d', '1', '-o', str(out)])
    assert r.returncode != 0
    assert not out.exists()


@pytest.mark.parametrize('cpu_only', [False, True])
def test_a_kernel_thread_is_refused_and_named(tmp_path, cpu_only):
    r = run(['profile', '--pid', '2', '-d', '1', '-o', str(tmp_path / 'm')] +
            (['--cpu-only'] if cpu_only else []))
    assert r.returncode != 0
    assert b'kernel thread' in r.stderr and b'kthreadd' in r.stderr, r.stderr


def test_python_attach_to_a_kernel_thread_is_einval():
    with ditto.Profile(duration=1, cpu_windows=-1) as p:
        with pytest.raises(ditto.DittoError) as e:
            p.attach(2)
    assert 'kernel thread' in e.value.message


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_in_the_system_window_ends_the_profile_promptly(tmp_path, sig):
    port = free_port()
    srv = subprocess.Popen([need('redis-server'), '--port', str(port), '--bind', '127.0.0.1',
                            '--save', '', '--appendonly', 'no'], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = tmp_path / 'm'
        # Nobody loads it: --allow-idle, the idle window is not under test.
        cli = subprocess.Popen([CLI, 'profile', '--pid', str(srv.pid), '-d', '60', '-q',
                                '--allow-idle', '-o', str(out)], stderr=subprocess.PIPE)
        time.sleep(2)
        t0 = time.monotonic()
        cli.send_signal(sig)
        _, err = cli.communicate(timeout=30)
        assert time.monotonic() - t0 < 5, 'CPU windows ran after the signal'
        assert cli.returncode == 0, err
        m = ditto.Model.load(str(out))
        with pytest.raises(ditto.NotFoundError):
            m.get('services[0].cpu')
        assert srv.poll() is None
    finally:
        srv.terminate()
        srv.wait(10)


def test_a_target_that_exits_during_cpu_windows_is_reported(tmp_path):
    gt = os.path.join(os.environ['DITTO_CLI'].rsplit('/examples/', 1)[0], 'tests', 'cpu',
                      'gt_exit')
    proc = subprocess.Popen([gt, 'process'], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b'ready'
        r = run(['profile', '--cpu-only', '--pid', str(proc.pid), '-W', '3', '-I',
                 str(10 ** 7), '-o', str(tmp_path / 'm')])
        assert b'exited during the CPU windows' in r.stderr, r.stderr
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
