# SPDX-License-Identifier: MIT
"""Docker for the compose test: Debian's docker.io and docker-compose
(installed with apt-get when missing and we are root), the daemon started
when none answers and stopped again only if this test started it."""

import os
import shutil
import subprocess
import tempfile
import time

PACKAGES = 'docker.io docker-compose'
MISSING = ('docker is not available: install the Debian packages %s '
           '(apt-get install %s; scripts/bootstrap.sh does)' % (PACKAGES, PACKAGES))


def _docker():
    # Debian's first: another docker client (/usr/local/bin) may speak
    # another API version than Debian's daemon.
    for p in ('/usr/bin/docker', shutil.which('docker')):
        if p and os.access(p, os.X_OK):
            return p
    return None


def _compose(docker):
    if shutil.which('docker-compose'):
        c = ['/usr/bin/docker-compose' if os.access('/usr/bin/docker-compose', os.X_OK)
             else shutil.which('docker-compose')]
        if subprocess.run(c + ['version'], capture_output=True).returncode == 0:
            return c
    if docker and subprocess.run([docker, 'compose', 'version'],
                                 capture_output=True).returncode == 0:
        return [docker, 'compose']
    return None


def _install():
    if os.geteuid() != 0 or not shutil.which('apt-get'):
        return
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    subprocess.run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends'] +
                   PACKAGES.split(), env=env, capture_output=True, timeout=600)


class Docker:
    """docker and compose commands, with a daemon that answers."""

    def __init__(self):
        self.docker = _docker()
        self.compose = _compose(self.docker)
        if not self.docker or not self.compose:
            _install()
            self.docker, self.compose = _docker(), None
            self.compose = _compose(self.docker)
        if not self.docker or not self.compose:
            raise RuntimeError(MISSING)
        self.daemon = None
        self.log = None
        if not self._answers():
            self._start_daemon()

    def _answers(self):
        return subprocess.run([self.docker, 'info'], capture_output=True,
                              timeout=60).returncode == 0

    def _start_daemon(self):
        dockerd = shutil.which('dockerd') or '/usr/sbin/dockerd'
        if not os.access(dockerd, os.X_OK):
            raise RuntimeError(MISSING + ' (no dockerd)')
        if os.geteuid() != 0:
            raise RuntimeError('the docker daemon is not running and only root can start it')
        self.log = tempfile.NamedTemporaryFile(prefix='ditto-dockerd-', suffix='.log',
                                               delete=False)
        # Host networking only: no bridge, no iptables rules to leave behind.
        self.daemon = subprocess.Popen([dockerd, '--iptables=false', '--bridge=none'],
                                       stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise RuntimeError('dockerd exited %d: see %s' % (self.daemon.returncode,
                                                                 self.log.name))
            if self._answers():
                return
            time.sleep(0.5)
        self.close()
        raise RuntimeError('dockerd did not answer within 60 s: see %s' % self.log.name)

    def run(self, *args, timeout=300, check=True):
        r = subprocess.run([self.docker] + [str(a) for a in args], capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode:
            raise AssertionError('docker %s: %s' % (' '.join(map(str, args)), r.stderr))
        return r

    def compose_run(self, project, file, *args, timeout=300, check=True):
        r = subprocess.run(self.compose + ['-p', project, '-f', str(file)] +
                           [str(a) for a in args], capture_output=True, text=True,
                           timeout=timeout)
        if check and r.returncode:
            raise AssertionError('compose %s: %s%s' % (' '.join(map(str, args)), r.stdout,
                                                       r.stderr))
        return r

    def close(self):
        """Stop the daemon if this object started it (by its PID)."""
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait(10)
        self.daemon = None
