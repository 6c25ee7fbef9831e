# SPDX-License-Identifier: MIT
"""MariaDB on a private datadir (mariadb-install-db in a temporary
directory, its own socket, 127.0.0.1 on a free port, grant tables skipped
so any user is taken), filled for sysbench oltp_read_only and stopped by
its PID: the system's own instance and port 3306 are never touched. Used
by test_clone_mysql.py and bench/clone-compare."""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

from harness import free_port, stop

TABLE_SIZE = 10000
NAMES = ('mariadb-install-db', 'mariadbd', 'mariadb', 'sysbench')


def tools():
    """{name: path} of the programs needed, and the names missing."""
    paths = {n: shutil.which(n) or shutil.which(n, path='/usr/sbin:/usr/bin') for n in NAMES}
    return paths, [n for n, p in paths.items() if not p]


def listening(port):
    with socket.socket() as s:
        s.settimeout(1)
        try:
            s.connect(('127.0.0.1', port))
            return s.recv(1) != b''
        except OSError:
            return False


def sysbench_argv(bins, port, *args, seconds=3, threads=4, cmd='run'):
    return [bins['sysbench'], 'oltp_read_only', '--mysql-host=127.0.0.1',
            '--mysql-port=%d' % port, '--mysql-user=root', '--mysql-db=sbtest', '--tables=1',
            '--table-size=%d' % TABLE_SIZE, '--threads=%d' % threads,
            '--time=%d' % seconds] + list(args) + [cmd]


def sysbench_rates(bins, port, *args, seconds=3, threads=4):
    """A bounded run: (transactions, queries) per second. Raises on any
    error: a rate from a run that failed would read as a measurement."""
    r = subprocess.run(sysbench_argv(bins, port, *args, seconds=seconds, threads=threads),
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    done = re.search(r'transactions: +(\d+) +\(([\d.]+) per sec', out)
    queries = re.search(r'queries: +(\d+) +\(([\d.]+) per sec', out)
    errors = re.search(r'ignored errors: +(\d+)', out)
    if (r.returncode != 0 or not done or not queries or int(done.group(1)) == 0 or
            not errors or int(errors.group(1)) != 0 or 'FATAL' in out):
        raise RuntimeError('sysbench on port %d: status %d: %s' % (port, r.returncode, out[-2000:]))
    return float(done.group(2)), float(queries.group(2))


class Server:
    """mariadbd on its own datadir, socket and port; its PID is the
    server's (it does not fork), stopped by that PID. With prepare, the
    database sbtest is created and filled by sysbench."""

    def __init__(self, bins, port=None, prepare=True):
        self.dir = tempfile.mkdtemp(prefix='ditto-mysql-')
        self.proc = None
        try:
            self._start(bins, port or free_port())
            if prepare:
                self._prepare(bins)
        except BaseException:
            self.stop()
            raise

    def _start(self, bins, port):
        data = os.path.join(self.dir, 'data')
        subprocess.run([bins['mariadb-install-db'], '--no-defaults', '--datadir=' + data,
                        '--user=root', '--skip-test-db', '--auth-root-authentication-method=normal'],
                       check=True, capture_output=True, timeout=180)
        self.port = port
        self.log = os.path.join(self.dir, 'error.log')
        self.proc = subprocess.Popen([bins['mariadbd'], '--no-defaults', '--datadir=' + data,
                                      '--user=root', '--bind-address=127.0.0.1',
                                      '--port=%d' % self.port,
                                      '--socket=' + os.path.join(self.dir, 'sock'),
                                      '--pid-file=' + os.path.join(self.dir, 'pid'),
                                      '--log-error=' + self.log, '--skip-grant-tables',
                                      '--innodb-buffer-pool-size=64M', '--skip-log-bin'],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not listening(self.port):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError('mariadbd did not start: %s' % self.error_log())
            time.sleep(0.2)

    def _prepare(self, bins):
        r = subprocess.run([bins['mariadb'], '--no-defaults', '-h', '127.0.0.1', '-P',
                            str(self.port), '-u', 'root', '-e', 'CREATE DATABASE sbtest'],
                           capture_output=True, text=True, timeout=60)
        if r.returncode:
            raise RuntimeError('CREATE DATABASE: ' + r.stdout + r.stderr)
        r = subprocess.run(sysbench_argv(bins, self.port, cmd='prepare'), capture_output=True,
                           text=True, timeout=300)
        if r.returncode:
            raise RuntimeError('sysbench prepare: ' + r.stdout + r.stderr)

    def error_log(self):
        try:
            with open(self.log) as f:
                return f.read()[-2000:]
        except OSError:
            return '(no error log)'

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        try:
            return stop(self.proc, 60) if self.proc else 0
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
