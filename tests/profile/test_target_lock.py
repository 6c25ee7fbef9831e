# SPDX-License-Identifier: MIT
"""The one-session-per-target lock (lib/profile/target_lock.c): a second
session is -EBUSY, an unprivileged user can neither block root nor make it
follow a planted link, and no lock file outlives its session, even a
SIGKILLed one."""

import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import ditto
from conftest import SANITIZER_ENV, need, stop

LOCK_DIR = '/run/libditto'
NOBODY = 65534


def sleeper(seconds=30):
    return subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(%g)' % seconds])


def start_time(pid):
    with open('/proc/%d/stat' % pid) as f:
        return f.read().rpartition(')')[2].split()[19]


def lock_name(pid):
    return 'pid-%d-%s.lock' % (pid, start_time(pid))


def locks_of(pid):
    prefix = 'pid-%d-' % pid
    try:
        return [n for n in os.listdir(LOCK_DIR) if n.startswith(prefix)]
    except FileNotFoundError:
        return []


def profile_briefly(pid):
    with ditto.Profile(duration=5, cpu_windows=-1) as p:
        p.attach(pid)
        assert locks_of(pid) == [lock_name(pid)]
        p.cancel()
        p.run()
        p.finish()


def test_second_session_is_ebusy_and_no_lock_file_is_left():
    proc = sleeper()
    try:
        with ditto.Profile(duration=5, cpu_windows=-1) as first, \
                ditto.Profile(duration=5, cpu_windows=-1) as second:
            first.attach(proc.pid)
            with pytest.raises(ditto.DittoError) as e:
                second.attach(proc.pid)
            assert e.value.code == -errno.EBUSY
            assert LOCK_DIR in e.value.message
            first.cancel()
            first.run()
            first.finish()
        assert locks_of(proc.pid) == []
        st = os.lstat(LOCK_DIR)
        assert st.st_uid == 0 and (st.st_mode & 0o7777) == 0o700
        # the lock went with the session: a new one may start
        profile_briefly(proc.pid)
        assert locks_of(proc.pid) == []
    finally:
        stop(proc)


HOLDER = r'''
import fcntl, os, sys, time
pid = int(sys.argv[1])
held = []
# The old lock of libditto, in world-writable /run/lock and /tmp.
for d in ('/run/lock', '/tmp'):
    try:
        f = open('%s/ditto-profile-%d.lock' % (d, pid), 'w')
        fcntl.flock(f, fcntl.LOCK_EX)
        held.append(f)
    except OSError:
        pass
# The new one: nobody may even look into the directory.
try:
    os.listdir('/run/libditto')
    print('listed', flush=True)
except OSError:
    pass
try:
    os.mkdir('/run/libditto')
    print('created', flush=True)
except OSError:
    pass
print('holding %d' % len(held), flush=True)
time.sleep(30)
'''


def test_an_unprivileged_user_cannot_block_root():
    setpriv = need('setpriv')
    proc = sleeper()
    holder = subprocess.Popen([setpriv, '--reuid=%d' % NOBODY, '--regid=%d' % NOBODY,
                               '--clear-groups', sys.executable, '-c', HOLDER, str(proc.pid)],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = holder.stdout.readline()
        assert line.startswith('holding'), line
        profile_briefly(proc.pid)
        assert locks_of(proc.pid) == []
    finally:
        holder.kill()
        holder.wait()
        stop(proc)
        for d in ('/run/lock', '/tmp'):
            try:
                os.unlink('%s/ditto-profile-%d.lock' % (d, proc.pid))
            except OSError:
                pass


def test_a_planted_symlink_is_not_followed():
    proc = sleeper()
    scratch = tempfile.mkdtemp()
    victim = os.path.join(scratch, 'victim')
    old = '/run/lock/ditto-profile-%d.lock' % proc.pid
    try:
        # Where an unprivileged user could plant one: not used any more.
        # (Versions before it left their lock files there, never removed:
        # one for this PID would be in the way.)
        if os.path.lexists(old):
            os.unlink(old)
        os.symlink(victim, old)
        profile_briefly(proc.pid)
        assert not os.path.lexists(victim)
        # Inside the lock directory only root can plant one; even then
        # the link is refused, not followed.
        os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
        planted = os.path.join(LOCK_DIR, lock_name(proc.pid))
        os.symlink(victim, planted)
        try:
            with ditto.Profile(duration=5, cpu_windows=-1) as p:
                with pytest.raises(ditto.DittoError) as e:
                    p.attach(proc.pid)
            assert e.value.code == -errno.ELOOP
            assert 'not followed' in e.value.message
            assert not os.path.lexists(victim)
        finally:
            os.unlink(planted)
    finally:
        os.unlink(old)
        shutil.rmtree(scratch)
        stop(proc)


KILLED = r'''
import sys, time
import ditto
p = ditto.Profile(duration=60, cpu_windows=-1)
p.attach(int(sys.argv[1]))
print('attached', flush=True)
p.run()
'''


def test_a_sigkilled_profilers_lock_is_removed_by_the_next_session():
    proc = sleeper()
    other = sleeper()
    # This child loads libditto: under a sanitizer build it needs the
    # runtimes the services must not get.
    killed = subprocess.Popen([sys.executable, '-c', KILLED, str(proc.pid)],
                              stdout=subprocess.PIPE, text=True, start_new_session=True,
                              env=dict(os.environ, **SANITIZER_ENV))
    try:
        assert killed.stdout.readline().strip() == 'attached'
        assert locks_of(proc.pid) == [lock_name(proc.pid)]
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        # The kernel dropped the flock with the process: not -EBUSY, and
        # the next session of root (on any target) removes the file.
        profile_briefly(other.pid)
        assert locks_of(proc.pid) == []
        assert locks_of(other.pid) == []
        profile_briefly(proc.pid)
        assert locks_of(proc.pid) == []
    finally:
        if killed.poll() is None:
            killed.kill()
            killed.wait()
        stop(proc)
        stop(other)
