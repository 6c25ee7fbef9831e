# SPDX-License-Identifier: MIT
"""Bad input and faults: a PID that does not exist or exits mid-window, a
second profiler on one PID, Ctrl-C, a killed profiler, missing privileges,
no kernel BTF. The target is never left stopped or traced, nothing stays
loaded, and a launched command does not outlive the profile."""

import errno
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

import ditto
from conftest import free_port, need, stop

CLI = os.environ.get('DITTO_CLI')
OUR_PROGRAMS = {'on_sys_enter', 'on_sys_exit', 'on_switch', 'on_wakeup', 'on_fork', 'on_exit'}


def our_bpf_programs():
    """How many of the collector's programs are loaded in the kernel now."""
    out = subprocess.run([need('bpftool'), '-j', 'prog', 'show'], stdout=subprocess.PIPE,
                         check=True).stdout
    return sum(1 for p in json.loads(out or b'[]') if p.get('name') in OUR_PROGRAMS)


def wait_unloaded(before, timeout=5):
    """The kernel frees programs shortly after their last fd closes."""
    deadline = time.monotonic() + timeout
    while our_bpf_programs() != before and time.monotonic() < deadline:
        time.sleep(0.1)
    return our_bpf_programs()


def proc_status(pid):
    fields = {}
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            k, _, v = line.partition(':')
            fields[k] = v.strip()
    return fields


def sleeper(seconds):
    return subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(%g)' % seconds])


def test_pid_that_does_not_exist_is_esrch():
    with ditto.Profile(duration=1, cpu_windows=-1) as p:
        with pytest.raises(ditto.DittoError) as e:
            p.attach(4194000)
    assert e.value.code == -errno.ESRCH
    assert '4194000' in e.value.message


def test_target_exiting_mid_window_keeps_what_was_collected():
    proc = sleeper(1.0)
    try:
        t0 = time.monotonic()
        with ditto.Profile(duration=30, cpu_windows=-1) as p:
            p.attach(proc.pid)
            p.run()
            model = p.finish()
        assert time.monotonic() - t0 < 10, 'the window should end when the target exits'
        model.validate()
        assert model.get('meta.window_s') < 10
        assert model.get('services[0].threads')
    finally:
        stop(proc)


def test_second_profiler_on_the_same_pid_is_ebusy():
    proc = sleeper(30)
    try:
        with ditto.Profile(duration=5, cpu_windows=-1) as first, \
                ditto.Profile(duration=5, cpu_windows=-1) as second:
            first.attach(proc.pid)
            with pytest.raises(ditto.DittoError) as e:
                second.attach(proc.pid)
            assert e.value.code == -errno.EBUSY
            first.cancel()
            first.run()
            first.finish()
    finally:
        stop(proc)


def test_event_loop_integration_with_fileno_and_step():
    proc = sleeper(30)
    try:
        with ditto.Profile(duration=1.5, cpu_windows=-1) as p:
            p.attach(proc.pid)
            steps = 0
            t0 = time.monotonic()
            while True:
                select.select([p.fileno()], [], [], 2.0)
                steps += 1
                if not p.step(0):
                    break
            # Readable about once a second (timer) plus when stacks arrive.
            assert steps >= 1
            assert time.monotonic() - t0 < 5
            p.finish().validate()
    finally:
        stop(proc)


def test_sigint_writes_the_model_and_leaves_the_target_running(tmp_path):
    before = wait_unloaded(0)
    proc = sleeper(60)
    out = tmp_path / 'model.msgpack'
    try:
        # A sleeper serves nothing: --allow-idle (test_no_silent_answers.py).
        cli = subprocess.Popen([CLI, 'profile', '--pid', str(proc.pid), '-q', '--allow-idle',
                                '-o', str(out)], stderr=subprocess.PIPE)
        time.sleep(1.5)
        assert our_bpf_programs() == before + len(OUR_PROGRAMS)
        cli.send_signal(signal.SIGINT)
        _, err = cli.communicate(timeout=20)
        assert cli.returncode == 0, err
        assert out.exists()
        ditto.Model.load(str(out)).validate()
        status = proc_status(proc.pid)
        assert status['TracerPid'] == '0'
        assert status['State'][0] in 'SR'
        assert wait_unloaded(before) == before
    finally:
        stop(proc)


def test_killed_profiler_leaks_no_bpf_program(tmp_path):
    before = wait_unloaded(0)
    proc = sleeper(60)
    try:
        cli = subprocess.Popen([CLI, 'profile', '--pid', str(proc.pid), '-q', '-o',
                                str(tmp_path / 'm')], stderr=subprocess.PIPE)
        time.sleep(1.5)
        cli.kill()
        cli.wait(10)
        assert wait_unloaded(before) == before
        assert proc.poll() is None and proc_status(proc.pid)['State'][0] in 'SR'
    finally:
        stop(proc)


def test_without_privileges_the_missing_capability_is_named(tmp_path):
    setpriv = shutil.which('setpriv')
    if not setpriv:
        pytest.skip('setpriv (util-linux) not found')
    # The output is writable and reachable: the capability is what lacks.
    d = tmp_path
    while str(d) != '/':
        os.chmod(d, os.stat(d).st_mode | 0o711)
        d = d.parent
    os.chmod(tmp_path, 0o777)
    r = subprocess.run([setpriv, '--reuid=65534', '--regid=65534', '--clear-groups',
                        '--inh-caps=-all', CLI, 'profile', '--pid', str(os.getpid()), '-d', '1',
                        '-o', str(tmp_path / 'm')], stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 1
    assert b'CAP_BPF' in r.stderr


@pytest.mark.parametrize('btf', ['missing', 'not_btf'])
def test_without_kernel_btf_the_profile_is_eopnotsupp_and_says_what_to_do(tmp_path, btf,
                                                                           monkeypatch, capfd):
    """A host without BTF, made honestly: DITTO_BTF_PATH names the kernel
    BTF the library checks and loads against. A missing file is caught by
    the environment check; an empty one gets through to libbpf, whose own
    error (-ESRCH when it finds no BTF, -EIO here) must come back as
    -EOPNOTSUPP, and whose messages go to the log callback at debug level,
    not to stderr."""
    path = tmp_path / 'vmlinux'
    if btf == 'not_btf':
        path.write_bytes(b'')
    env = dict(os.environ, DITTO_BTF_PATH=str(path))
    r = subprocess.run([CLI, 'profile', '--pid', str(os.getpid()), '-d', '1', '-q', '-o',
                        str(tmp_path / 'm')], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 1
    assert b'libbpf:' not in r.stdout + r.stderr
    assert b'No such process' not in r.stderr
    assert b'BTF' in r.stderr and b'DITTO_BTF_PATH' in r.stderr, r.stderr
    assert not (tmp_path / 'm').exists()
    # The same through the binding, in this process (a second interpreter
    # would need the sanitizer runtimes preloaded in a sanitizer build).
    monkeypatch.setenv('DITTO_BTF_PATH', str(path))
    capfd.readouterr()
    with pytest.raises(ditto.DittoError) as e:
        ditto.Profile(duration=1)
    assert e.value.code == -errno.EOPNOTSUPP
    assert 'libbpf:' not in capfd.readouterr().err


def gone(pid):
    """pid has exited (a zombie waiting for init counts as gone)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] in 'ZX'
    except (FileNotFoundError, ProcessLookupError):
        return True


def redis_pids(port):
    """PIDs of the redis-server this test launched on port (a read-only look-up)."""
    r = subprocess.run(['pgrep', '-f', 'redis-server 127.0.0.1:%d' % port],
                       stdout=subprocess.PIPE)
    return [int(x) for x in r.stdout.split()]


def launch_redis_under_load(tmp_path, *cli_args):
    """ditto profile -- redis-server, loaded by redis-benchmark, its output
    on pipes as in a pipeline: returns (cli result, model, redis PIDs)."""
    port = free_port()
    out = tmp_path / 'model.msgpack'
    # One CPU window: an idle redis's timer keeps full windows going for
    # seconds each (28 s for eight under the sanitizers). A window of 8 s:
    # with 3, redis-benchmark once waited on the launched redis until its
    # timeout under the sanitizers, likely a stepped window outlasting the
    # profile, which then stopped the redis under load.
    cli = subprocess.Popen([CLI, 'profile', '-d', '8', '-q', '-W', '1', '-o', str(out)] +
                           list(cli_args) +
                           ['--', need('redis-server'), '--port', str(port), '--bind',
                            '127.0.0.1', '--save', '', '--appendonly', 'no'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids = []
    try:
        time.sleep(1)
        subprocess.run([need('redis-benchmark'), '-p', str(port), '-n', '2000', '-c', '2', '-t',
                        'ping', '-q'], stdout=subprocess.DEVNULL, timeout=30, check=True)
        pids = redis_pids(port)
        # A launched service left running keeps the pipes open: the
        # pipeline would wait on it (it did, 10 minutes).
        _, err = cli.communicate(timeout=30)
        assert cli.returncode == 0, err[-3000:]
        return cli, ditto.Model.load(str(out)), pids
    except BaseException:
        for pid in pids or redis_pids(port):
            os.kill(pid, signal.SIGKILL)
        if cli.poll() is None:
            cli.kill()
        raise


def test_launch_profiles_a_command_from_its_start_and_stops_it_at_the_end(tmp_path):
    cli, model, pids = launch_redis_under_load(tmp_path)
    assert model.get('services[0].requests.count') >= 2000
    assert model.get('services[0].network.io_model') == 'epoll'
    assert pids, 'redis-server was not found while it ran'
    assert all(gone(pid) for pid in pids), 'the launched service was left running'


def test_launch_with_keep_running_leaves_the_command_running(tmp_path):
    # Its output is not the pipes of the CLI: the command outlives the CLI.
    port = free_port()
    log = open(tmp_path / 'cli.log', 'w+b')
    # Nobody loads it: --allow-idle (test_no_silent_answers.py).
    cli = subprocess.Popen([CLI, 'profile', '-d', '2', '-q', '-W', '0', '--allow-idle', '-o',
                            str(tmp_path / 'm'), '--keep-running', '--', need('redis-server'),
                            '--port', str(port), '--bind', '127.0.0.1', '--save', '',
                            '--appendonly', 'no'], stdout=log, stderr=log)
    pids = []
    try:
        cli.wait(30)
        log.seek(0)
        assert cli.returncode == 0, log.read()[-3000:]
        pids = redis_pids(port)
        assert pids and not any(gone(pid) for pid in pids), 'it should keep running'
    finally:
        for pid in pids or redis_pids(port):
            os.kill(pid, signal.SIGTERM)
        if cli.poll() is None:
            cli.kill()


STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, '-c', 'import signal, time; '
                          'signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])
time.sleep(0.3)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write('%d %d' % (os.getpid(), child.pid))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
time.sleep(60)
"""


def test_launched_command_and_its_children_that_ignore_sigterm_are_killed(tmp_path):
    pidfile = tmp_path / 'pids'
    with ditto.Profile(duration=30, cpu_windows=-1, sample_hz=-1, launch_grace=0.5) as p:
        p.launch([sys.executable, '-c', STUBBORN, str(pidfile)])
        deadline = time.monotonic() + 20
        while not pidfile.exists() and time.monotonic() < deadline:
            p.step(100)
        assert pidfile.exists()
        pids = [int(x) for x in pidfile.read_text().split()]
        try:
            p.cancel()
            p.run()
            t0 = time.monotonic()
            p.finish().validate()
            took = time.monotonic() - t0
        except BaseException:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            raise
    deadline = time.monotonic() + 5
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if not gone(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, 'left running: %s' % left
    assert took < 5, 'the grace period is 0.5 s'
