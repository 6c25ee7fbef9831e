# SPDX-License-Identifier: MIT
"""Validation warnings: mix keys of another format and unknown knob names
leave a model valid (a newer writer's must load) but are reported, by
Model.warnings() and by `ditto model validate`; the sample has none."""

import os
import subprocess

import pytest

from ditto import Model


def cli(*args):
    exe = os.environ.get('DITTO_CLI')
    if not exe:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    return subprocess.run([exe] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)


def test_sample_writes_only_current_names(sample):
    assert sample.warnings() == []
    assert all(k.startswith('synth.') for k in sample.knobs)


def test_old_mix_key_and_unknown_knob_warn(tmp_path):
    m = Model()
    s = m.add_service('echo', framing='raw', processes=1)
    s.add_port(7000)
    s.add_thread('main', count=1, role='main', io_model='epoll')
    c = s.add_cpu('main')
    c.add_mix('alu.rr.none.64.base', 10)
    c.add_mix('int.add.reg.reg.64.base', 5)
    m.knobs['synth.body_scale'] = 1.5
    m.knobs['insts_per_request_scale'] = 2.0
    assert m.problems() == []
    warnings = m.warnings()
    assert [p for p, _ in warnings] == ['services[0].cpu[0].mix', 'tuning.knobs'], warnings
    assert 'int.add.reg.reg.64.base' in warnings[0][1]
    assert 'insts_per_request_scale' in warnings[1][1]

    path = tmp_path / 'warned.model'
    m.save(str(path))
    assert Model.load(str(path)).warnings() == warnings   # it still loads
    r = cli('model', 'validate', path)
    err = r.stderr.decode()
    assert r.returncode == 0, err
    assert r.stdout.decode().strip() == '%s: ok, 2 warnings' % path
    assert '%s: services[0].cpu[0].mix: warning: ' % path in err, err
    assert '%s: tuning.knobs: warning: ' % path in err, err
    r = cli('model', 'validate', '--strict', path)
    assert r.returncode == 1, r.stderr.decode()


def test_cli_sample_validates_strictly(tmp_path):
    path = tmp_path / 'sample.model'
    assert cli('model', 'sample', '-o', path).returncode == 0
    r = cli('model', 'validate', '--strict', path)
    assert r.returncode == 0 and r.stderr == b'', r.stderr.decode()
    assert r.stdout.decode().strip() == '%s: ok' % path
