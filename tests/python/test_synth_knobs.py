# SPDX-License-Identifier: MIT
"""Generator knobs given to synth directly (ditto_synth_opts.knobs,
`ditto synth --knob`), not through the model: the model is only read."""

import os
import subprocess

import pytest

import ditto


def hold_share(tree):
    with open(os.path.join(tree, 'clone_config.c')) as f:
        line = next(l for l in f if '.hold_share =' in l)
    return float(line.split('=')[1].strip().rstrip(','))


def test_knobs_are_listed_with_defaults_in_range():
    knobs = ditto.synth_knobs()
    assert 'synth.hold_share' in knobs and 'synth.body_scale' in knobs
    for name, (d, lo, hi) in knobs.items():
        assert name.startswith('synth.') and lo <= d <= hi, name


def test_knobs_given_override_the_model_and_leave_it_alone(sample_path, tmp_path):
    m = ditto.Model.load(str(sample_path))
    m.knobs['synth.hold_share'] = 0.25
    before = m.to_bytes()
    ditto.synth(m, tmp_path / 'model', force=True)
    ditto.synth(m, tmp_path / 'given', knobs={'synth.hold_share': 0.75}, force=True)
    assert hold_share(tmp_path / 'model') == 0.25
    assert hold_share(tmp_path / 'given') == 0.75
    assert m.to_bytes() == before


def test_an_unknown_knob_is_refused(sample_path, tmp_path):
    m = ditto.Model.load(str(sample_path))
    with pytest.raises(ditto.DittoError, match='synth.hold_shar'):
        ditto.synth(m, tmp_path / 't', knobs={'synth.hold_shar': 0.5})
    assert not (tmp_path / 't').exists()


def test_cli_knob(sample_path, tmp_path):
    cli = os.environ['DITTO_CLI']
    r = subprocess.run([cli, 'synth', str(sample_path), '-o', str(tmp_path / 't'), '-n',
                        '--knob', 'synth.hold_share=0.5'], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    # the sample model has two services and edges: a graph tree, the knob in every clone
    assert hold_share(tmp_path / 't' / 'redis') == 0.5
    assert hold_share(tmp_path / 't' / 'memcached') == 0.5
    r = subprocess.run([cli, 'synth', str(sample_path), '-o', str(tmp_path / 'u'), '-n',
                        '--knob', 'hold_share=0.5'], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "'hold_share' is not a knob" in r.stderr, r.stderr
    r = subprocess.run([cli, 'synth', '--help'], capture_output=True, text=True, timeout=60)
    assert 'synth.hold_share' in r.stdout


def test_a_knob_scoped_to_a_service_applies_there_only_and_wins(sample_path, tmp_path):
    """NODE/synth.NAME (the graph tuner's per-tier knobs) sets NODE's clone
    and overrides the unscoped key there; other services keep the
    unscoped one."""
    cli = os.environ['DITTO_CLI']
    r = subprocess.run([cli, 'synth', str(sample_path), '-o', str(tmp_path / 't'), '-n',
                        '--knob', 'synth.hold_share=0.5', '--knob',
                        'memcached/synth.hold_share=0.125'], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert hold_share(tmp_path / 't' / 'redis') == 0.5
    assert hold_share(tmp_path / 't' / 'memcached') == 0.125
    m = ditto.Model.load(str(sample_path))
    m.knobs['redis/synth.hold_share'] = 0.25
    assert m.warnings() == []
    ditto.synth(m, tmp_path / 'r', service='redis', force=True)
    assert hold_share(tmp_path / 'r') == 0.25
    with pytest.raises(ditto.DittoError, match='/synth.hold_share'):
        ditto.synth(m, tmp_path / 'x', knobs={'/synth.hold_share': 0.5})


def test_cpu_scale_lengthens_the_body(sample_path, tmp_path):
    def insts(tree):
        with open(os.path.join(tree, 'clone_config.c')) as f:
            return f.read()

    m = ditto.Model.load(str(sample_path))
    ditto.synth(m, tmp_path / 'a', service='redis', force=True)
    ditto.synth(m, tmp_path / 'b', service='redis', knobs={'synth.cpu_scale': 4}, force=True)
    assert insts(tmp_path / 'a') != insts(tmp_path / 'b')
