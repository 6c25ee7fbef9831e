# SPDX-License-Identifier: MIT
"""`ditto model diff` tells through its exit status whether two models
are within a bound of each other (0), differ beyond it (1), or could not
be compared (2), as diff(1) does, so a script need not parse its table."""

import os
import subprocess

import pytest

from conftest import write_sample



def diff(*args):
    cli = os.environ.get('DITTO_CLI')
    if not cli:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    return subprocess.run([cli, 'model', 'diff'] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60)


def test_model_diff_exit_status_says_within_or_beyond_the_bound(sample_path, tmp_path):
    same = diff(sample_path, sample_path)
    assert same.returncode == 0, same.stdout + same.stderr
    assert 'models within the bound' in same.stdout
    other = write_sample(tmp_path / 'other.model', seed=11)
    beyond = diff(sample_path, other)
    assert beyond.returncode == 1, beyond.stdout + beyond.stderr
    assert 'models differ beyond the bound 0.05' in beyond.stdout
    assert diff('--json', sample_path, other).returncode == 1
    # --min-error hides rows, not the verdict.
    assert diff('--min-error', '5', sample_path, other).returncode == 1
    assert diff('--bound', '1e9', sample_path, other).returncode == 0

def test_model_diff_trouble_is_not_a_difference(sample_path, tmp_path):
    assert diff(sample_path, tmp_path / 'missing.model').returncode == 2
    assert diff(sample_path).returncode == 2
    assert diff('--bound', 'x', sample_path, sample_path).returncode == 2


def one_service_model(path, name, calls):
    """A model of one service named name, with one syscall and requests."""
    import ditto
    m = ditto.Model()
    svc = m.add_service(name)
    svc.add_thread('main', count=1, role='main', io_model='epoll')
    svc.add_syscall('main', 'read', 'tcp', calls=calls)
    svc.requests.count = 1000
    m.save(str(path))
    return m


def test_two_single_service_models_pair_whatever_their_names(tmp_path):
    # A clone's service is named apart from its original's: matching by
    # name compared nothing (only_a and only_b lines, nothing else).
    a = one_service_model(tmp_path / 'a.model', 'redis-server', 2000)
    b = one_service_model(tmp_path / 'b.model', 'clone', 3000)
    r = diff(tmp_path / 'a.model', tmp_path / 'b.model')
    assert r.returncode == 1, r.stdout + r.stderr
    assert "pairing service 'redis-server' with 'clone' (one service each)" in r.stdout
    assert 'only_a' not in r.stdout and 'only_b' not in r.stdout, r.stdout
    assert 'services[redis-server].syscalls[main:read:tcp].calls_per_request' in r.stdout
    j = diff('--json', tmp_path / 'a.model', tmp_path / 'b.model')
    assert j.returncode == 1 and 'pairing service' in j.stderr
    import json
    rows = {m['path']: m for m in json.loads(j.stdout)}
    row = rows['services[redis-server].syscalls[main:read:tcp].calls_per_request']
    assert (row['a'], row['b']) == (2.0, 3.0)
    # The binding pairs the same way and says so.
    cmp = a.compare(b)
    assert cmp.paired == ('redis-server', 'clone')
    assert not [m for m in cmp if m.kind in ('only_a', 'only_b')]
    assert {m.path for m in cmp} == set(rows)
    # Same names: no pairing line; several services: by name, as before.
    same = diff(tmp_path / 'a.model', tmp_path / 'a.model')
    assert same.returncode == 0 and 'pairing' not in same.stdout
    assert a.compare(a).paired is None


def test_models_of_several_services_still_pair_by_name(sample_path, tmp_path):
    one_service_model(tmp_path / 'b.model', 'clone', 3000)
    r = diff(sample_path, tmp_path / 'b.model')
    assert r.returncode == 1
    assert 'pairing' not in r.stdout
    assert 'only_a' in r.stdout and 'only_b' in r.stdout
