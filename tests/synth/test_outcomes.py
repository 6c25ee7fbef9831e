# SPDX-License-Identifier: MIT
"""Outcomes are replayed, not only calls (issue 18, item 5): a model whose
opens mostly fail (a path search) and whose serving thread reads until
EAGAIN gives a clone that, profiled under load, fails as often: failed
opens and stats per request, closes balanced with the opens that
succeeded, EAGAIN reads per request, each within 5% of the model."""

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
    ('read', 'tcp'): (1.84, 0.84),
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
        s.add_syscall('serve', name, fd_kind=fd, calls=int(calls * REQUESTS),
                      errors=int(errors * REQUESTS))
    s.requests.count = REQUESTS
    s.requests.response_bytes.add(5, REQUESTS)
    s.requests.response_bytes_total = 5 * REQUESTS
    return m


def rates(path):
    """{(call, fd): (calls, errors) per request} of a profile."""
    m = d.Model.load(str(path))
    s = m.service(0)
    n = s.requests.count
    assert n > 1000, n
    out = {}
    for c in s.syscalls:
        calls, errors = out.get((c.name, c.fd_kind), (0, 0))
        out[(c.name, c.fd_kind)] = (calls + c.calls / n, errors + c.errors / n)
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
        c, e = got[key]
        assert rel(calls, c) <= SYSCALL_BOUND, (key, 'calls', calls, c)
        assert rel(errors, e) <= SYSCALL_BOUND, (key, 'errors', errors, e)
