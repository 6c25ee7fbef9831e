# SPDX-License-Identifier: MIT
"""Outcomes are replayed, not only calls (issue 18, item 5): a model whose
opens mostly fail (a path search) and whose serving thread reads until
EAGAIN gives a clone that, profiled under load, fails as often and with
the same errnos: failed opens (ENOENT, ENOTDIR, EEXIST), stats (ENOENT)
and lseeks (EINVAL) per request, closes balanced with the opens that
succeeded, EAGAIN reads per request, each within 5% of the model. An
errno the clone cannot make (EACCES as root) is named in a warning."""

import errno
import subprocess

import pytest

import ditto as d
from compare import SYSCALL_BOUND, profile_clone, rel
from conftest import CLI, Clone

pytestmark = pytest.mark.root

REQUESTS = 10000
# (call, fd kind as the profiler records it): (calls, errors) per request
CALLS = {
    ('openat', 'none'): (7, 6),
    ('close', 'file'): (1, 0),
    ('newfstatat', 'none'): (2, 1),
    ('lseek', 'file'): (1, 0.5),
    ('read', 'tcp'): (1.84, 0.84),
}
# ... and by errno, per request
ERRNOS = {
    ('openat', 'none'): {errno.ENOENT: 4, errno.ENOTDIR: 1, errno.EEXIST: 1},
    ('newfstatat', 'none'): {errno.ENOENT: 1},
    ('lseek', 'file'): {errno.EINVAL: 0.5},
    ('read', 'tcp'): {errno.EAGAIN: 0.84},
}


def outcome_model():
    m = d.Model()
    s = m.add_service('outcomes', framing='resp')
    s.network.io_model = 'epoll'
    s.network.processes = 1
    s.network.network_threads = 1
    s.add_thread('serve', count=1, role='network', io_model='epoll')
    s.add_syscall('serve', 'write', fd_kind='tcp', calls=REQUESTS)
    s.add_syscall('serve', 'epoll_wait', calls=REQUESTS)
    for (name, fd), (calls, errors) in CALLS.items():
        c = s.add_syscall('serve', name, fd_kind=fd, calls=int(calls * REQUESTS),
                          errors=int(errors * REQUESTS))
        for err, n in ERRNOS.get((name, fd), {}).items():
            c.errnos.add(err, int(n * REQUESTS))
    s.requests.count = REQUESTS
    s.requests.response_bytes.add(5, REQUESTS)
    s.requests.response_bytes_total = 5 * REQUESTS
    return m


def rates(path):
    """{(call, fd): (calls, errors, {errno: errors}) per request} of a profile."""
    m = d.Model.load(str(path))
    s = m.service(0)
    n = s.requests.count
    assert n > 1000, n
    out = {}
    for c in s.syscalls:
        calls, errors, by = out.get((c.name, c.fd_kind), (0, 0, {}))
        for lo, _, k in c.errnos.buckets:
            by[lo] = by.get(lo, 0) + k / n
        out[(c.name, c.fd_kind)] = (calls + c.calls / n, errors + c.errors / n, by)
    return out


def test_failed_calls_and_eagain_reads_are_replayed_at_their_rates(tmp_path):
    model = tmp_path / 'outcomes.msgpack'
    m = outcome_model()
    m.validate()
    m.save(str(model))
    tree = tmp_path / 'tree'
    d.synth(m, tree)
    d.build(tree)
    clone = Clone(tree)
    try:
        out = tmp_path / 'clone.msgpack'
        # One connection: the clone's extra read comes right after its
        # answer, before the client can send again, as in the original.
        load = [CLI, 'load', '--port', str(clone.port), '--framing', 'resp', '-c', '1',
                '-d', '6']
        profile_clone(clone, 'outcomes', out, load, duration=2, windows=0)
    finally:
        assert clone.stop() == 0
    got = rates(out)
    for key, (calls, errors) in CALLS.items():
        assert key in got, (key, sorted(got))
        c, e, by = got[key]
        assert rel(calls, c) <= SYSCALL_BOUND, (key, 'calls', calls, c)
        assert rel(errors, e) <= SYSCALL_BOUND, (key, "errors", errors, e, by)
        want = ERRNOS.get(key, {})
        assert set(by) == set(want), (key, by)
        for err, n in want.items():
            assert rel(n, by[err]) <= SYSCALL_BOUND, (key, errno.errorcode[err], n, by[err])


def test_an_errno_the_clone_cannot_make_is_named(tmp_path):
    m = outcome_model()
    c = [c for c in m.service(0).syscalls if c.name == 'openat'][0]
    c.errnos.add(errno.EACCES, 10)
    m.save(str(tmp_path / 'm.msgpack'))
    r = subprocess.run([CLI, 'synth', str(tmp_path / 'm.msgpack'), '-o', str(tmp_path / 'tree'),
                        '--no-build'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert any('10 calls of openat failed with EACCES' in ln and 'fail with ENOENT' in ln
               for ln in r.stderr.splitlines()), r.stderr
