# SPDX-License-Identifier: MIT
"""Processes the synthesizer's tests and bench/clone-compare share: the
CLI, free ports, clones started (waiting for their "ready") and real
services, both stopped by PID."""

import os
import random
import shutil
import signal
import socket
import subprocess
import time

CLI = os.environ.get('DITTO_CLI', 'ditto')
TOOLS = os.environ.get('DITTO_SYNTH_TOOLS', '.')

# Clones are plain programs: no sanitizer runtime is preloaded into them.
# Kept for the Python processes a test starts that load the library (in
# the sanitized build, the runtime must come first).
SANITIZER_ENV = {_var: os.environ.pop(_var)
                 for _var in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS') if _var in os.environ}


def _port_range():
    """Ports below the kernel's ephemeral range: a port picked inside it
    can be taken, while its server is stopped between two measurements,
    as the local port of any client connection (a tune test's original
    failed to bind its own port so)."""
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            lo = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        lo = 32768
    # tests/profile takes 21000-29000
    return (29500, lo - 1) if lo > 30500 else (61000, 65000)


def free_port():
    first, last = _port_range()
    for _ in range(100):
        port = random.randint(first, last)
        with socket.socket() as s:
            try:
                s.bind(('127.0.0.1', port))
                return port
            except OSError:
                continue
    raise RuntimeError('no free port')


def need(program):
    path = shutil.which(program)
    if not path:
        raise RuntimeError('%s is missing: scripts/bootstrap.sh installs it' % program)
    return path


def ditto(*args, check=True, timeout=300):
    r = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError('ditto %s failed (%d):\n%s%s' % (' '.join(map(str, args)),
                                                           r.returncode, r.stdout, r.stderr))
    return r


def stop(proc, timeout=10):
    """SIGTERM by PID; returns the exit status (SIGKILL after timeout)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
            raise AssertionError('pid %d ignored SIGTERM for %d s' % (proc.pid, timeout))
    return proc.returncode


class Clone:
    """A built clone, started on a free port; waits for its "ready"."""

    def __init__(self, tree, *extra):
        self.port = free_port()
        self.proc = subprocess.Popen([os.path.join(str(tree), 'clone'), '--port', str(self.port),
                                      '--max-seconds', '300'] + list(extra),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if line.strip() != b'ready':
            self.proc.kill()
            err = self.proc.stderr.read().decode(errors='replace')
            raise AssertionError('clone did not start: %r %s' % (line, err))

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        rc = stop(self.proc)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc


class Service:
    """A real service on 127.0.0.1, waited for until it listens."""

    def __init__(self, argv, port):
        self.port = port
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(('127.0.0.1', port)) == 0:
                    return
            time.sleep(0.05)
        stop(self.proc)
        raise RuntimeError('%s did not listen on %d' % (argv[0], port))

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        stop(self.proc)
