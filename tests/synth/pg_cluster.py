# SPDX-License-Identifier: MIT
"""A private PostgreSQL cluster for the tests and bench/clone-compare:
initdb in a temporary directory, trust authentication, 127.0.0.1 on a
free port, run as the user postgres, stopped by its postmaster's PID."""

import os
import pwd
import shutil
import subprocess
import tempfile
import time

from harness import free_port, stop

PG_BIN = '/usr/lib/postgresql/15/bin'


def pg_tool(name):
    path = os.path.join(PG_BIN, name)
    if not os.access(path, os.X_OK):
        raise RuntimeError('%s is missing: scripts/bootstrap.sh installs postgresql' % path)
    return path


def as_postgres():
    pw = pwd.getpwnam('postgres')
    return dict(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])


class Cluster:
    """initdb'd in a temporary directory; postgres itself is the child
    (its PID is the postmaster's), stopped by that PID."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix='ditto-pg-')
        pw = pwd.getpwnam('postgres')
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        data = os.path.join(self.dir, 'data')
        subprocess.run([pg_tool('initdb'), '-D', data, '-A', 'trust', '-U', 'postgres',
                        '--no-sync'], check=True, capture_output=True, timeout=120,
                       **as_postgres())
        self.port = free_port()
        self.log = open(os.path.join(self.dir, 'log'), 'w')
        self.proc = subprocess.Popen([pg_tool('postgres'), '-D', data, '-h', '127.0.0.1', '-p',
                                      str(self.port), '-k', self.dir, '-c', 'fsync=off'],
                                     stdout=self.log, stderr=self.log, **as_postgres())
        deadline = time.monotonic() + 30
        while subprocess.run([pg_tool('pg_isready'), '-h', '127.0.0.1', '-p', str(self.port)],
                             capture_output=True).returncode != 0:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError('postgres did not start: %s' % open(self.log.name).read())
            time.sleep(0.2)

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        try:
            return stop(self.proc, 30)
        finally:
            self.log.close()
            shutil.rmtree(self.dir, ignore_errors=True)
