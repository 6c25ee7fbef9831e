# SPDX-License-Identifier: MIT
"""Facts the profiler could not learn are absent, never 0: the binding
gives None and `ditto model show` prints 'unknown'."""

import os
import subprocess

import pytest

from ditto import Model


def show(path):
    cli = os.environ.get('DITTO_CLI')
    if not cli:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    r = subprocess.run([cli, 'model', 'show', str(path)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors='replace')
    return r.stdout.decode()


def test_absent_host_facts_are_none():
    m = Model()
    assert set(m.meta.host.values()) == {None}
    assert set(m.meta.load.values()) == {None}


def test_sample_host_facts_are_read(sample):
    host = sample.meta.host
    assert host['l1d_bytes'] == 48 << 10 and host['cores'] >= 8
    assert isinstance(host['cpu_model'], str) and host['cpu_model']
    assert sample.meta.load['connections'] > 0


def test_show_prints_unknown_for_absent_values(tmp_path):
    m = Model()
    s = m.add_service('echo', framing='raw', processes=1)
    s.add_port(7000)
    m.save(str(tmp_path / 'empty.model'))
    out = show(tmp_path / 'empty.model')
    host = next(line for line in out.splitlines() if line.startswith('  host:'))
    assert 'L1d unknown, L1i unknown, L2 unknown, LLC unknown' in host, out
    assert host.startswith('  host: unknown, kernel unknown, unknown cores'), out
    assert 'load: unknown at unknown qps over unknown connections' in out, out
    assert 'saturation throughput unknown' in out, out
    assert 'over unknown connections (' in out, out
    assert ' 0 B' not in host and '0 qps' not in out and ' 0 connections' not in out, out


def test_show_prints_known_values(sample_path):
    out = show(sample_path)
    host = next(line for line in out.splitlines() if line.startswith('  host:'))
    assert 'L1d 48.0 KiB' in host and 'unknown' not in host, out
    assert 'saturation throughput unknown' not in out, out
